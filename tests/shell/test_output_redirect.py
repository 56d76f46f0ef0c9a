"""`log_to_file` and `chdir_to_trial_dir` in the in-process executor:
trials share one `sys.stdout` and one working directory and end in any
order, and the driver keeps working streams whatever the order (ending the
first of two trials used to put back a stream the second then replaced
with the first's closed file: "lost sys.stderr"), and a trial its
directory (a failed trial's late release used to move its restart out)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import msgspec
import pytest

import tunecore
from tunecore.model import JsonDict
from tunecore.shell.executors.host import TrialHost
from tunecore.shell.executors.taken import TakenInTurn
from tunecore.shell.trainable import make_worker_trainable
from tunecore.shell.trainable.worker import TrialContext


class Idle(tunecore.Trainable):
    def step(self) -> JsonDict:
        return {"loss": 0.0}


def context(tmp_path: Path, number: int) -> TrialContext:
    return TrialContext(
        trial_id=f"t{number}",
        trial_name=f"t{number}",
        trial_dir=str(tmp_path / f"t{number}"),
        experiment_dir=str(tmp_path),
        stdout_file="out.txt",
        stderr_file="err.txt",
    )


def test_trials_ending_out_of_order_leave_the_streams_working(tmp_path: Path) -> None:
    before = (sys.stdout, sys.stderr)
    first, second = (TrialHost(lambda c, ctx: make_worker_trainable(Idle, c, ctx)) for _ in "12")
    first.assign({}, context(tmp_path, 1))
    second.assign({}, context(tmp_path, 2))
    first.release()
    print("the second still runs")
    print("to its stderr", file=sys.stderr)
    second.release()
    assert (sys.stdout, sys.stderr) == before
    assert (tmp_path / "t2" / "out.txt").read_text() == "the second still runs\n"
    assert (tmp_path / "t2" / "err.txt").read_text() == "to its stderr\n"


def test_a_trial_ending_last_in_first_out_gives_back_the_stream_it_found(
    tmp_path: Path,
) -> None:
    before = sys.stdout
    outer, inner = (TrialHost(lambda c, ctx: make_worker_trainable(Idle, c, ctx)) for _ in "12")
    outer.assign({}, msgspec.structs.replace(context(tmp_path, 1), stderr_file=None))
    inner.assign({}, msgspec.structs.replace(context(tmp_path, 2), stderr_file=None))
    inner.release()
    print("the first again")
    outer.release()
    assert sys.stdout is before
    assert (tmp_path / "t1" / "out.txt").read_text() == "the first again\n"


def test_a_failed_trials_late_release_leaves_its_restart_in_the_trial_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In process, a failed trial's release runs on its old worker's thread
    and may come after its restart (another host, the same directory) has
    changed into the trial's directory: the restart stays there."""
    monkeypatch.chdir(tmp_path)
    chdir = msgspec.structs.replace(context(tmp_path, 1), chdir=True)
    failed, restarted = (
        TrialHost(lambda c, ctx: make_worker_trainable(Idle, c, ctx)) for _ in "12"
    )
    failed.assign({}, chdir)
    restarted.assign({}, chdir)
    failed.release()
    assert Path.cwd() == tmp_path / "t1"
    restarted.release()
    assert Path.cwd() == tmp_path


def test_the_newest_value_held_is_in_place_and_the_first_found_comes_back() -> None:
    values: list[str] = ["found"]
    setting = TakenInTurn(lambda: values[-1], values.append)
    first, second, third = setting.take("a"), setting.take("b"), setting.take("b")
    setting.give_back(second)  # an equal value still held: identity decides
    assert values[-1] == "b"
    setting.give_back(third)
    assert values[-1] == "a"
    fourth = setting.take("c")
    setting.give_back(first)
    assert values[-1] == "c"
    setting.give_back(fourth)
    assert values[-1] == "found"


def test_a_missing_stream_comes_back_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sys.stdout` is None in a process started without one (pythonw, some
    daemons): after the trial it is None again, not the trial's closed file."""
    monkeypatch.setattr(sys, "stdout", None)
    host = TrialHost(lambda c, ctx: make_worker_trainable(Idle, c, ctx))
    host.assign({}, msgspec.structs.replace(context(tmp_path, 1), stderr_file=None))
    assert sys.stdout is not None
    host.release()
    assert sys.stdout is None


def test_a_trials_output_goes_to_its_file_and_to_the_console_it_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Ray's `Tee`: on a Ray worker the console is the worker's output,
    which Ray shows on the driver; in process it is the driver's. A second
    trial in the same process echoes to the console, not into the first's
    file."""
    console = io.StringIO()
    monkeypatch.setattr(sys, "stdout", console)
    first, second = (TrialHost(lambda c, ctx: make_worker_trainable(Idle, c, ctx)) for _ in "12")
    only_stdout = {"stderr_file": None}
    first.assign({}, msgspec.structs.replace(context(tmp_path, 1), **only_stdout))
    print("from the first")
    second.assign({}, msgspec.structs.replace(context(tmp_path, 2), **only_stdout))
    print("from the second")
    second.release()
    first.release()
    assert sys.stdout is console
    assert console.getvalue() == "from the first\nfrom the second\n"
    assert (tmp_path / "t1" / "out.txt").read_text() == "from the first\n"
    assert (tmp_path / "t2" / "out.txt").read_text() == "from the second\n"


def test_a_closed_console_loses_the_echo_not_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    console = io.StringIO()
    monkeypatch.setattr(sys, "stdout", console)
    host = TrialHost(lambda c, ctx: make_worker_trainable(Idle, c, ctx))
    host.assign({}, msgspec.structs.replace(context(tmp_path, 1), stderr_file=None))
    console.close()
    print("still written")
    host.release()
    assert (tmp_path / "t1" / "out.txt").read_text() == "still written\n"
