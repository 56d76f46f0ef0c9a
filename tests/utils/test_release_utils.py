"""`tunecore.utils.release_test_util` and `tunecore.utils.mock`: the
workload and status watchers of Ray Tune's release tests (the compat script
`release_test_workloads.py` runs `timed_tune_run` on Ray)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tunecore.utils import release_test_util
from tunecore.utils.mock import TrialStatusSnapshot, TrialStatusSnapshotTaker
from tunecore.utils.release_test_util import ProgressCallback, _checkpoints_at, _verdict


def test_a_snapshot_is_kept_only_when_the_statuses_change() -> None:
    snapshot = TrialStatusSnapshot()
    assert not snapshot.all_trials_are_terminated()
    assert snapshot.max_running_trials() == 0
    taker = TrialStatusSnapshotTaker(snapshot)
    statuses = [
        {"a": "RUNNING", "b": "PENDING"},
        {"a": "RUNNING", "b": "PENDING"},
        {"a": "RUNNING", "b": "RUNNING"},
        {},
        {"a": "TERMINATED", "b": "TERMINATED"},
    ]
    for step, seen in enumerate(statuses):
        trials = [SimpleNamespace(trial_id=i, status=s) for i, s in seen.items()]
        taker.on_step_end(iteration=step, trials=trials)  # type: ignore[arg-type]
    assert snapshot._snapshots == [statuses[0], statuses[2], statuses[4]]
    assert snapshot.max_running_trials() == 2
    assert snapshot.all_trials_are_terminated()


def test_an_error_status_is_not_terminated() -> None:
    snapshot = TrialStatusSnapshot()
    snapshot.append({"a": "TERMINATED", "b": "ERROR"})
    assert not snapshot.all_trials_are_terminated()


@pytest.mark.parametrize(
    ("iteration", "every", "size_b", "expected"),
    [
        (0, 3, 8, True),
        (2, 3, 8, False),
        (6, 3, 8, True),
        (5, 0, 8, True),  # a period shorter than one result: every result
        (0, -1, 8, False),  # no checkpoint period
        (0, 3, 0, False),  # no checkpoint size
    ],
)
def test_when_the_workload_saves(iteration: int, every: int, size_b: int, expected: bool) -> None:
    assert _checkpoints_at(iteration, every, size_b) is expected


def test_the_class_workload_reports_its_score_and_saves_its_size(tmp_path: Path) -> None:
    config = {"num_iters": 2, "sleep_time": 0.0, "score": 0.25, "checkpoint_size_b": 800}
    trainable = release_test_util.TestDurableTrainable(config={**config, "checkpoint_iters": 1})
    results = [trainable.train() for _ in range(3)]
    assert [r["score"] for r in results] == [0.25, 1.25, 2.25]
    assert [bool(r.get("done")) for r in results] == [False, False, True]
    checkpoint_dir = tmp_path / "checkpoint"
    checkpoint_dir.mkdir()
    trainable.save_checkpoint(str(checkpoint_dir))
    assert (checkpoint_dir / "bogus.ckpt").stat().st_size == 800
    trainable.stop()


def test_progress_is_written_at_most_once_an_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "progress.json"
    monkeypatch.setenv("TEST_OUTPUT_JSON", str(output))
    callback = ProgressCallback()
    trials = [SimpleNamespace(status="RUNNING"), SimpleNamespace(status="PENDING")]
    callback.on_step_end(iteration=4, trials=trials)  # type: ignore[arg-type]
    written = json.loads(output.read_text())
    assert written["iteration"] == 4
    assert written["trial_states"] == {"RUNNING": 1, "PENDING": 1}
    trials[1].status = "RUNNING"
    callback.on_step_end(iteration=5, trials=trials)  # type: ignore[arg-type]
    assert json.loads(output.read_text())["iteration"] == 4  # within the minute
    callback.last_update -= callback.update_interval + 1
    callback.on_step_end(iteration=6, trials=trials)  # type: ignore[arg-type]
    assert json.loads(output.read_text())["trial_states"] == {"RUNNING": 2}
    assert [path.name for path in tmp_path.iterdir()] == ["progress.json"]  # no temporary left


def test_ray_s_node_killing_callback_says_what_to_use() -> None:
    with pytest.raises(ImportError, match="FailureConfig"):
        from tunecore.utils.mock import FailureInjectorCallback  # noqa: F401, PLC0415


def test_the_verdict_is_ray_s_text_word_for_word() -> None:
    """Ray's release pipeline reads these lines (docs/ray-examples.md, row 350)."""
    assert _verdict("result throughput", 36.724, 240) == (
        "The result throughput test took 36.72 seconds, which is below the budget of "
        "240.00 seconds. Test successful. \n\n"
        "--- PASSED: RESULT THROUGHPUT ::: 36.72 <= 240.00 ---"
    )
    assert _verdict("koch", 240.5, 240) == (
        "The koch test took 240.50 seconds, but should not have exceeded 240.00 seconds. "
        "Test failed. \n\n--- FAILED: KOCH ::: 240.50 > 240.00 ---"
    )
