"""`DistributeResources` and `DistributeResourcesToTopJob` on cases worked
out by hand (test_distribute_vs_ray.py checks them against Ray's own), and
their settings checked."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest

from tunecore.core import new_trial
from tunecore.core.schedulers.distribute import (
    DistributeResources,
    DistributeResourcesToTopJob,
    Pool,
    as_resources,
)
from tunecore.model import InvalidFieldError, Mode, Resources, TrialSpec, TrialState, TrialStatus


def trial_state(trial_id: str, resources: Resources, loss: float | None) -> TrialState:
    spec = TrialSpec(trial_id=trial_id, trainable_name="train", resources=resources)
    last = {} if loss is None else {"loss": loss}
    return msgspec.structs.replace(
        new_trial(spec), status=TrialStatus.RUNNING, recorded_result=last
    )


def test_the_example_of_four_trials_on_eight_cpus_gives_each_two() -> None:
    """Ray's docs: the free CPUs spread evenly, one CPU at a time."""
    states = [trial_state(f"t_{i:05d}", Resources(cpu=1.0), None) for i in range(4)]
    pool = Pool(live=tuple(states), base=Resources(cpu=1.0), total=Resources(cpu=8.0))
    grown = DistributeResources().allocate(states[0], {"training_iteration": 1}, pool)
    assert grown == Resources(cpu=2.0)
    assert DistributeResources().allocate(states[0], {"training_iteration": 0}, pool) is None


def test_an_empty_head_bundle_is_kept() -> None:
    """A ScalingConfig's layout: the trial runs in an empty first bundle."""
    base = as_resources([{}, {"CPU": 1.0}], "PACK")
    states = [trial_state("t_00000", base, None)]
    pool = Pool(live=tuple(states), base=base, total=Resources(cpu=3.0))
    grown = DistributeResources(add_bundles=True).allocate(
        states[0], {"training_iteration": 1}, pool
    )
    assert grown == as_resources([{}, {"CPU": 1.0}, {"CPU": 1.0}, {"CPU": 1.0}], "PACK")


@pytest.mark.parametrize(
    ("settings_", "field"),
    [
        ({"increase_by": {"memory": 1.0}}, "DistributeResources.increase_by"),
        ({"increase_by": {"CPU": -1.0}}, "DistributeResources.increase_by['CPU']"),
        ({"increase_by_times": 1.5}, "DistributeResources.increase_by_times"),
        ({"reserve_resources": [1]}, "DistributeResources.reserve_resources"),
        ({"add_bundles": "yes"}, "DistributeResources.add_bundles"),
    ],
)
def test_bad_settings_name_the_field(settings_: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidFieldError, match=re.escape(field)):
        DistributeResources(**settings_)


def test_top_job_needs_a_metric_from_somewhere() -> None:
    with pytest.raises(InvalidFieldError, match=r"DistributeResourcesToTopJob\.metric"):
        DistributeResourcesToTopJob().with_objective(None, Mode.MIN)
    chosen = DistributeResourcesToTopJob(mode=Mode.MAX).with_objective("acc", Mode.MIN)
    assert (chosen.metric, chosen.mode) == ("acc", Mode.MAX)  # its own mode wins
