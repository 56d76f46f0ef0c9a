"""On Ray, PBT exploits no donor whose only checkpoint is tunecore's null
one (a function trainable that never reported a checkpoint), as Ray Tune
2.60 skips the exploit ("[pbt]: no checkpoint for trial ... Skip exploit"):
the lower trial goes on with its own config, counting on. A function that
does report checkpoints is exploited as before (docs/ray-examples.md, row
421: the user's Lightning + PB2 run exploited from a null checkpoint and
crashed on the donor's config): a donor that reported a checkpoint with
its result at its perturbation is cloned from that checkpoint, as Ray
Tune 2.60 clones the save it asked for there. Which trial meets which
donor is made certain with gate files (`gated_pbt`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.gated_pbt import STEPS, first_trial, fit
from tunecore.model import CheckpointSaved
from tunecore.schedulers import PopulationBasedTraining
from tunecore.shell.eventlog import read_log
from tunecore.shell.replay import replay

pytestmark = [pytest.mark.usefixtures("ray_cluster"), pytest.mark.slow]


def test_a_donor_that_never_reported_a_checkpoint_is_not_cloned(tmp_path: Path) -> None:
    results = fit(str(tmp_path), tmp_path / "gates", checkpoints=False)
    experiment = tmp_path / "pbt"

    assert [r.error for r in results] == [None, None]
    for result in results:
        assert result.config["rate"] == (1.0 if result.config["role"] == "low" else 10.0)
        assert "@perturbed" not in str(result.metrics["experiment_tag"])
        progress = result.metrics_dataframe
        assert progress is not None
        iterations = list(progress["training_iteration"])
        assert iterations == list(range(1, STEPS + 1))  # counted on, never taken over
        assert result.checkpoint is None  # as on Ray: an empty save is no checkpoint
    saved = [e for e in read_log(experiment).events if isinstance(e, CheckpointSaved)]
    assert saved, "PBT saved the upper trial's checkpoint"
    assert all(e.checkpoint.empty is True for e in saved)  # null: nothing reported
    scheduler = replay(experiment).state.scheduler
    assert isinstance(scheduler, PopulationBasedTraining)
    assert scheduler.num_perturbations == 0
    assert scheduler.num_checkpoints >= 1


def test_a_donor_with_a_checkpoint_at_its_perturbation_is_cloned(tmp_path: Path) -> None:
    results = fit(str(tmp_path), tmp_path / "gates", checkpoints=True)
    experiment = tmp_path / "pbt"

    assert [r.error for r in results] == [None, None]
    # The first trial (grid order: "low") was exploited at its step 2 and
    # took the donor's whole config, its role too, and the donor's state of
    # step 1 (the checkpoint `top` reported with its result at its
    # perturbation): it went on from step 2 again.
    low = first_trial(results)
    progress = low.metrics_dataframe
    assert progress is not None
    assert low.config["role"] == "top"
    assert list(progress["step"])[:3] == [1, 2, 2]
    # rate 1, then the donor's 10 explored to a neighbour in the list: 2 or 20
    assert list(progress["score"])[:3] in ([1.0, 2.0, 4.0], [1.0, 2.0, 40.0])
    saved = [e for e in read_log(experiment).events if isinstance(e, CheckpointSaved)]
    assert all(e.checkpoint.of_its_result for e in saved)  # each step reported one
    scheduler = replay(experiment).state.scheduler
    assert isinstance(scheduler, PopulationBasedTraining)
    assert scheduler.clones_perturbation_save
    assert scheduler.num_perturbations >= 1
