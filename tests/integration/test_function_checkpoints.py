"""Function trainables on a real (local) Ray: checkpoints reported from a
temporary directory, as Ray Tune's documentation writes them."""

from __future__ import annotations

from pathlib import Path

import pytest

import tunecore
from tests.integration import trainables
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import TrialStatus
from tunecore.schedulers import PopulationBasedTraining

pytestmark = pytest.mark.usefixtures("ray_cluster")


@pytest.mark.slow  # some 16 s: the `slow` session
def test_temporary_checkpoints_survive_pbt_on_ray(tmp_path: Path) -> None:
    pbt = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=3,  # odd: PBT saves at steps that reported no checkpoint
        hyperparam_mutations={"rate": [0.5, 1.0, 2.0]},
        quantile_fraction=0.5,
        seed=1,
    )
    results = Tuner(
        trainables.counts_with_temporary_checkpoints,
        param_space={"rate": tunecore.grid_search([0.5, 1.0, 2.0, 3.0]), "steps": 6},
        tune_config=TuneConfig(metric="score", mode="max", scheduler=pbt, reuse_actors=False),
        run_config=RunConfig(name="pbt", storage_path=str(tmp_path), verbose=0),
    ).fit()

    assert [r.error for r in results] == [None] * 4
    assert [r.status for r in results] == [TrialStatus.TERMINATED] * 4
    assert {r.metrics["step"] for r in results} == {6}
    for result in results:
        assert not (result.path / "worker_checkpoints").exists()
