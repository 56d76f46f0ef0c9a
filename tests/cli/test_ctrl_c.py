"""Ctrl-C pressed twice during `tunecore run`, in a real process on its own
Ray: the run stops once, cleanly, with 130, and its log holds everything
it recorded. A second Ctrl-C 0.3 s after the first once printed the
traceback of Ray's exit handler (or cut the run's cleanup short)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest

import tunecore
from tunecore.cli import main
from tunecore.model import ExperimentInterrupted
from tunecore.shell.eventlog import read_log

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 180.0
"""The most any step of the run may take, Ray's start included (seconds, normally)."""
SECOND_CTRL_C_AFTER_S = 0.3
"""The gap between the two presses: the scenario itself, not a synchronisation."""


def keeps_reporting(config: dict[str, object]) -> None:
    """Reports until the experiment stops it."""
    step = 0
    while True:
        step += 1
        tunecore.report({"loss": 1.0 / step})
        time.sleep(0.05)  # a training step's work


class Lines:
    """A stream of the process read in a thread; `seen` is set once a line
    with `text` has come."""

    def __init__(self, stream: IO[str], text: str) -> None:
        self.lines: list[str] = []
        self.seen = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(stream, text), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str], text: str) -> None:
        for line in stream:
            self.lines.append(line)
            if text in line:
                self.seen.set()

    def text(self) -> str:
        self._thread.join(WAIT_S)
        return "".join(self.lines)


def interrupted_twice(tmp_path: Path, press: Callable[[int], None]) -> tuple[int, str, str]:
    """Run, press Ctrl-C once trials run, again 0.3 s after the run said
    it is stopping; the exit code, stdout and stderr."""
    command = [sys.executable, "-m", "tunecore.cli", "run"]
    command += ["tests.cli.test_ctrl_c:keeps_reporting", "--storage-path", str(tmp_path)]
    command += ["--name", "exp", "--num-samples", "2"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    driver = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    assert driver.stdout is not None
    assert driver.stderr is not None
    out = Lines(driver.stdout, "RUNNING")  # the status, with trials running
    err = Lines(driver.stderr, "Interrupted:")  # the run took the first Ctrl-C
    try:
        assert out.seen.wait(WAIT_S), err.text()
        press(driver.pid)
        assert err.seen.wait(WAIT_S), err.text()
        time.sleep(SECOND_CTRL_C_AFTER_S)
        press(driver.pid)
        code = driver.wait(WAIT_S)
    finally:
        if driver.poll() is None:
            driver.kill()
    return code, out.text(), err.text()


@pytest.mark.slow  # some 11 s: the `slow` session
def test_two_ctrl_c_stop_the_run_once_cleanly_with_130(tmp_path: Path) -> None:
    code, out, err = interrupted_twice(tmp_path, lambda pid: os.kill(pid, signal.SIGINT))
    assert code == 130, err
    assert "Traceback" not in err
    assert "KeyboardInterrupt" not in err
    assert err.count("tunecore run: already stopping") <= 1, err  # said at most once
    assert f"Continue it with: tunecore resume {tmp_path / 'exp'}" in out
    # Nothing recorded is lost: the log ends with the interruption, and a
    # replay agrees with every snapshot the run wrote.
    assert isinstance(read_log(tmp_path / "exp", quiet=True).events[-1], ExperimentInterrupted)
    assert main(["replay", str(tmp_path / "exp")]) == 0


def test_a_second_ctrl_c_is_acknowledged_when_sys_stderr_has_no_descriptor(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """pytest's capture and notebooks replace `sys.stderr` by a stream with
    no file descriptor: the second Ctrl-C's acknowledgement must still not
    raise in the middle of stopping (it did: `io.UnsupportedOperation`)."""
    from tunecore.cli.interrupts import stopping_cleanly  # noqa: PLC0415

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with stopping_cleanly("run") as seen:
        handler = signal.getsignal(signal.SIGINT)
        assert callable(handler)
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGINT, None)
        handler(signal.SIGINT, None)
        handler(signal.SIGINT, None)
    assert seen == [True, True, True]
    assert capfd.readouterr().err.count("tunecore run: already stopping") == 1
