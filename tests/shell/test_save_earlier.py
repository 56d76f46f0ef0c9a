"""A worker's save says when it holds a checkpoint a function trainable
reported with an earlier result than its last (`SavedCheckpoint.earlier`,
`CheckpointRef.earlier`): Ray's save of a function is the checkpoint of
its last result, none there, and its PBT clones no such donor. A
function's save right after the result that reported it, or after a
restore, holds the state of the last result."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

import tunecore
from tunecore.model import JsonDict
from tunecore.shell.executors.host import TrialHost
from tunecore.shell.trainable import make_worker_trainable
from tunecore.shell.trainable.worker import TrialContext

CHECKPOINT_STEPS = (2, 4)


def every_other_step(config: JsonDict) -> None:
    """Reports a checkpoint with steps 2 and 4 only (from a restored step on)."""
    step = 0
    restored = tunecore.get_checkpoint()
    if restored is not None:
        with restored.as_directory() as directory:
            step = int(Path(directory, "step").read_text())
    while step < 6:
        step += 1
        if step in CHECKPOINT_STEPS:
            with tempfile.TemporaryDirectory() as directory:
                Path(directory, "step").write_text(str(step))
                tunecore.report(
                    {"step": step}, checkpoint=tunecore.Checkpoint.from_directory(directory)
                )
        else:
            tunecore.report({"step": step})


def host_for(tmp_path: Path, trainable: Callable[[JsonDict], None]) -> TrialHost:
    host = TrialHost(lambda cfg, ctx: make_worker_trainable(trainable, cfg, ctx))
    host.assign(
        {},
        TrialContext(
            trial_id="t0",
            trial_name="t0",
            trial_dir=str(tmp_path / "t0"),
            experiment_dir=str(tmp_path),
        ),
    )
    return host


@pytest.mark.parametrize(
    ("steps", "empty", "earlier", "holds"),
    [
        (1, True, False, None),  # nothing reported yet: the null checkpoint
        (2, False, False, "2"),  # reported with the last result
        (3, False, True, "2"),  # step 2's, saved at step 3
        (4, False, False, "4"),
        (5, False, True, "4"),
    ],
)
def test_a_function_s_save_says_whether_it_is_its_last_result_s(
    tmp_path: Path, steps: int, empty: bool, earlier: bool, holds: str | None
) -> None:
    host = host_for(tmp_path, every_other_step)
    try:
        for _ in range(steps):
            host.train()
        saved = host.save(str(tmp_path / "t0" / f"checkpoint_{steps:06d}"))
        assert (saved.empty, saved.earlier) == (empty, earlier)
        if holds is not None:
            assert Path(saved.path, "step").read_text() == holds
        # restored from it, the function's next save is the restored state's
        if holds is not None:
            host.restore(saved.path)
            again = host.save(str(tmp_path / "t0" / "checkpoint_again"))
            assert (again.empty, again.earlier) == (False, False)
    finally:
        host.release()
