"""The driver lock on an experiment directory (`shell/lock.py`): one holder
at a time, a refusal naming the holder, and a lock left by a dead process
free to take."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tunecore.api.experiment_names import set_aside_earlier_run
from tunecore.shell import lock as lock_module
from tunecore.shell.lock import LOCK_FILE, ExperimentLockedError, LockFileError, driver_lock

HOLD = """
import sys
from pathlib import Path
from tunecore.shell.lock import driver_lock
with driver_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def held_by_another_process(directory: Path) -> Iterator[subprocess.Popen[str]]:
    """A process holding `directory`'s lock until the block ends (it is
    SIGKILLed then, if the block has not ended it already)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(directory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "held\n"
        yield process
    finally:
        process.kill()
        process.wait()


def kill(process: subprocess.Popen[str]) -> None:
    """SIGKILL: the process releases nothing itself."""
    process.send_signal(signal.SIGKILL)
    process.wait()


def test_a_second_holder_is_refused_with_the_first_ones_pid_host_and_start(
    tmp_path: Path,
) -> None:
    with (
        held_by_another_process(tmp_path) as holder,
        pytest.raises(ExperimentLockedError) as refused,
        driver_lock(tmp_path),
    ):
        pytest.fail("two holders at once")
    message = str(refused.value)
    assert str(tmp_path) in message
    assert f"pid {holder.pid} on host {socket.gethostname()}, since 20" in message


def test_a_lock_in_this_process_refuses_a_second_in_this_process(tmp_path: Path) -> None:
    with (
        driver_lock(tmp_path),
        pytest.raises(ExperimentLockedError, match=f"pid {os.getpid()} "),
        driver_lock(tmp_path),
    ):
        pytest.fail("two holders at once")


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    with held_by_another_process(tmp_path) as holder:
        kill(holder)
        assert str(holder.pid) in (tmp_path / LOCK_FILE).read_text()  # it left its record
        with driver_lock(tmp_path):
            assert f'"pid": {os.getpid()}' in (tmp_path / LOCK_FILE).read_text()


def test_the_lock_is_released_when_the_block_ends_or_raises(tmp_path: Path) -> None:
    with driver_lock(tmp_path):
        pass
    assert (tmp_path / LOCK_FILE).read_text() == ""  # no holder named any more
    with pytest.raises(KeyboardInterrupt), driver_lock(tmp_path):
        raise KeyboardInterrupt
    with held_by_another_process(tmp_path):  # free again for another process
        pass


def test_of_many_taking_over_a_stale_lock_at_once_exactly_one_wins(tmp_path: Path) -> None:
    with held_by_another_process(tmp_path) as holder:
        kill(holder)
    takers = 8
    tried = threading.Barrier(takers)
    winners: list[int] = []

    def take(number: int) -> None:
        try:
            with driver_lock(tmp_path):
                winners.append(number)
                tried.wait()  # hold it until every other taker has tried
        except ExperimentLockedError:
            tried.wait()

    threads = [threading.Thread(target=take, args=(n,)) for n in range(takers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(winners) == 1


def test_a_lock_file_symlinked_elsewhere_is_refused_and_its_target_untouched(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    experiment = tmp_path / "exp"
    experiment.mkdir()
    (experiment / LOCK_FILE).symlink_to(victim)
    with pytest.raises(LockFileError) as refused, driver_lock(experiment):
        pytest.fail("locked through a symlink")
    assert f"{experiment / LOCK_FILE} is a symlink (to {victim})" in str(refused.value)
    assert victim.read_text() == "precious"


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda path: path.mkdir(), "a directory"),
        (os.mkfifo, "a FIFO"),
        (lambda path: path.symlink_to("/dev/zero"), "a symlink (to /dev/zero)"),
    ],
    ids=["directory", "fifo", "symlink-to-dev-zero"],
)
def test_a_lock_file_that_is_not_a_regular_file_is_refused_naming_what_it_is(
    tmp_path: Path, make: Callable[[Path], None], kind: str
) -> None:
    make(tmp_path / LOCK_FILE)
    with pytest.raises(LockFileError) as refused, driver_lock(tmp_path):
        pytest.fail("locked something that is not a regular file")
    assert f"{tmp_path / LOCK_FILE} is {kind}, not a regular file" in str(refused.value)


def test_a_lock_on_a_directory_set_aside_meanwhile_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `Tuner.restore` (or a second `fit()`) opened `exp/driver.lock`
    just before another `fit()` under the same name set the earlier run
    aside: that one moves `exp` away under the lock, releases it, and runs
    in a new `exp`. The first then locked the file it had opened, now in
    the directory set aside, and ran in the new `exp` too: two drivers on
    one log. A lock is held only on the file at the path once locked."""
    experiment = tmp_path / "exp"
    experiment.mkdir()
    (experiment / "events.log").write_bytes(b"an earlier run")
    opened = lock_module._open_lock_file
    with contextlib.ExitStack() as other_fit:

        def set_aside_after_the_open(path: Path) -> int:
            fd = opened(path)
            monkeypatch.setattr(lock_module, "_open_lock_file", opened)
            with pytest.warns(UserWarning, match="held an earlier experiment"):
                set_aside_earlier_run(experiment)
            experiment.mkdir()
            other_fit.enter_context(driver_lock(experiment))
            return fd

        monkeypatch.setattr(lock_module, "_open_lock_file", set_aside_after_the_open)
        with pytest.raises(ExperimentLockedError, match=str(os.getpid())), driver_lock(experiment):
            pass
