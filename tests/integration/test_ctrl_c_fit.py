"""Ctrl-C during `Tuner.fit()` in a real process on its own Ray, as Ray
Tune's SIGINT handler has it: the first press ends the run and `fit()`
returns; a second one, pressed while the run ends, raises
`KeyboardInterrupt` from `fit()`, and with `TUNE_DISABLE_SIGINT_HANDLER=1`
the first one does. Whichever way `fit()` ends, the log holds everything
recorded, ends with the interruption, and replays against every snapshot.

The driver is `python -m tests.integration.test_ctrl_c_fit SIGNALS STORAGE`;
it writes files the test waits on (never a sleep): `reported` once its
trial has reported twice, `ending` as a callback's `on_experiment_end`
begins, and the outcome of `fit()`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tunecore
from tunecore.cli import main
from tunecore.model import ExperimentInterrupted
from tunecore.shell.eventlog import read_log

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 300.0
"""The most any step of the driver may take, Ray's start included."""


def keeps_reporting(config: dict[str, object]) -> None:
    """Reports until the experiment stops it; says so after its second report."""
    step = 0
    while True:
        step += 1
        tunecore.report({"step": step})
        if step == 2:
            Path(str(config["signals"]), "reported").touch()
        time.sleep(0.05)  # a training step's work


class SlowEnd(tunecore.Callback):
    """An `on_experiment_end` that takes `SLOW_END_S` seconds (a minute
    unset) unless cut short, as a logger uploading its files may."""

    def __init__(self, signals: str) -> None:
        self.signals = signals

    def on_experiment_end(self, trials: object, **info: object) -> None:
        Path(self.signals, "ending").touch()
        end = time.monotonic() + float(os.environ.get("SLOW_END_S", "60"))
        while time.monotonic() < end:
            time.sleep(0.1)


def drive(signals: str, storage: str) -> None:
    tuner = tunecore.Tuner(
        keeps_reporting,
        param_space={"signals": signals},
        run_config=tunecore.RunConfig(
            name="exp", storage_path=storage, callbacks=[SlowEnd(signals)]
        ),
    )
    try:
        tuner.fit()
        outcome = "returned"
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    Path(signals, "outcome").write_text(outcome)


def interrupt(tmp_path: Path, presses: list[str], environ: dict[str, str]) -> str:
    """Run the driver, send SIGINT as each file of `presses` appears; the
    outcome of its `fit()`."""
    signals = tmp_path / "signals"
    signals.mkdir()
    env = {
        **os.environ,
        **environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
    }
    command = [sys.executable, "-m", "tests.integration.test_ctrl_c_fit"]
    driver = subprocess.Popen([*command, str(signals), str(tmp_path)], cwd=ROOT, env=env)
    try:
        for name in presses:
            deadline = time.monotonic() + WAIT_S
            while not (signals / name).exists():
                assert driver.poll() is None, f"the driver ended before {name}"
                assert time.monotonic() < deadline, f"no {name} in {WAIT_S} s"
                time.sleep(0.05)  # polling for the file, not a synchronisation by time
            driver.send_signal(signal.SIGINT)
        assert driver.wait(WAIT_S) == 0
    finally:
        if driver.poll() is None:
            driver.kill()
    return (signals / "outcome").read_text()


def assert_log_whole(experiment: Path) -> None:
    """The log ends with the interruption and replays against every snapshot."""
    assert isinstance(read_log(experiment, quiet=True).events[-1], ExperimentInterrupted)
    assert main(["replay", str(experiment)]) == 0


def test_a_second_ctrl_c_while_the_run_ends_raises_from_fit(tmp_path: Path) -> None:
    assert interrupt(tmp_path, ["reported", "ending"], {}) == "KeyboardInterrupt"
    assert_log_whole(tmp_path / "exp")


def test_with_the_handler_disabled_the_first_ctrl_c_raises_from_fit(tmp_path: Path) -> None:
    outcome = interrupt(tmp_path, ["reported"], {"TUNE_DISABLE_SIGINT_HANDLER": "1"})
    assert outcome == "KeyboardInterrupt"
    assert not (tmp_path / "signals" / "ending").exists()  # Ray's callbacks hear no end either
    assert_log_whole(tmp_path / "exp")


def test_one_ctrl_c_ends_the_run_and_fit_returns(tmp_path: Path) -> None:
    """The first press, handled: what the two above differ from (the
    callback's end is quick here: nothing cuts it short)."""
    assert interrupt(tmp_path, ["reported"], {"SLOW_END_S": "0"}) == "returned"
    assert_log_whole(tmp_path / "exp")


if __name__ == "__main__":
    drive(sys.argv[1], sys.argv[2])
