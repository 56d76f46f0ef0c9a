"""The start claim of a chained trial (`shell.executors.claim`): of all the
claims of one trial exactly the first succeeds, and one made where the
trial's directory cannot be made owns nothing."""

from __future__ import annotations

from pathlib import Path

from tunecore.shell.executors.claim import claim_start
from tunecore.shell.trainable.worker import TrialContext


def context(trial_dir: Path) -> TrialContext:
    return TrialContext(
        trial_id="t1",
        trial_name="t1",
        trial_dir=str(trial_dir),
        experiment_dir=str(trial_dir.parent),
    )


def test_only_the_first_claim_of_a_trial_succeeds(tmp_path: Path) -> None:
    chained = context(tmp_path / "t1")
    assert claim_start(chained)  # the worker, say
    assert (tmp_path / "t1").is_dir()
    assert not claim_start(chained)  # the driver, later: it waits for the worker
    assert not claim_start(context(tmp_path / "t1"))


def test_a_claim_where_the_directory_cannot_be_made_owns_nothing(tmp_path: Path) -> None:
    elsewhere = context(tmp_path / "no-shared-storage" / "t1")
    assert not claim_start(elsewhere)
    assert not (tmp_path / "no-shared-storage").exists()
