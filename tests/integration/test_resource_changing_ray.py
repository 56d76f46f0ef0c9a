"""`ResourceChangingScheduler` on a real Ray (the session's, 2 CPUs): a
trial that starts on 1 CPU grows to 2 after its first result, restarts on a
new actor that Ray gives 2 CPUs, from its checkpoint, and sees it through
`get_context().get_trial_resources()`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tunecore as tune
from tests.integration import resource_trainables as rt
from tests.integration.shipping import shipped_by_value
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import TrialStatus
from tunecore.schedulers import ResourceChangingScheduler
from tunecore.schedulers.resource_changing_scheduler import DistributeResources

pytestmark = pytest.mark.usefixtures("ray_cluster", "shipped")


@pytest.fixture(scope="module")
def shipped() -> Iterator[None]:
    with shipped_by_value(rt):
        yield


@pytest.mark.parametrize("allocation", [DistributeResources(), rt.two_cpus], ids=["default", "own"])
def test_a_trial_grows_from_one_cpu_to_two_and_sees_it(tmp_path: Path, allocation: Any) -> None:
    scheduler = ResourceChangingScheduler(resources_allocation_function=allocation)
    results = Tuner(
        tune.with_resources(rt.grow, {"cpu": 1}),
        param_space={"steps": 3},
        tune_config=TuneConfig(metric="shown", mode="max", scheduler=scheduler),
        run_config=RunConfig(name="exp", storage_path=str(tmp_path), verbose=0),
    ).fit()
    result = results[0]
    assert result.status is TrialStatus.TERMINATED, result.error
    frame = result.metrics_dataframe
    assert frame is not None
    assert list(frame["training_iteration"]) == [1, 2, 3]  # resumed from its checkpoint
    assert list(frame["shown"]) == [1.0, 2.0, 2.0]
    assert list(frame["given"]) == [1.0, 2.0, 2.0]  # Ray reserved them for the new actor
    assert frame["pid"].iloc[0] != frame["pid"].iloc[1]  # a new actor
    replayed = tune.replay(tmp_path / "exp", quiet=True).state
    assert [t.spec.resources.cpu for t in replayed.trials.values()] == [2.0]
