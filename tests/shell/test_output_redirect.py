"""`log_to_file` in the in-process executor: trials share one `sys.stdout`
and end in any order, and the driver keeps working streams whatever the
order (ending the first of two trials used to put back a stream the
second then replaced with the first's closed file: "lost sys.stderr")."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec

import tunecore
from tunecore.model import JsonDict
from tunecore.shell.executors.host import TrialHost
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
