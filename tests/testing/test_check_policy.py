"""`check_policy` on every built-in scheduler, on the example policy of
docs/offline-lab.md, and on policies broken on purpose: each broken rule is caught."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Self

import msgspec
import pytest
from examples.custom_scheduler import PatienceScheduler

from tunecore.core.schedulers.asha import ASHAPromotionScheduler, ASHAScheduler
from tunecore.core.schedulers.base import (
    CONTINUE,
    PAUSE,
    Fits,
    TrialScheduler,
    Verdict,
    first_fitting,
)
from tunecore.core.schedulers.distribute import DistributeResources, DistributeResourcesToTopJob
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.schedulers.hb_bohb import HyperBandForBOHB
from tunecore.core.schedulers.hyperband import HyperBandScheduler
from tunecore.core.schedulers.median import MedianStoppingRule
from tunecore.core.schedulers.pb2 import PB2
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.core.schedulers.pbt_replay import PolicyChange, PopulationBasedTrainingReplay
from tunecore.core.schedulers.resource_changing import ResourceChangingScheduler
from tunecore.model import JsonDict, Mode, TrialState
from tunecore.testing.check import PolicyViolation, check_policy

BUILT_IN: dict[str, Callable[[], TrialScheduler]] = {
    "fifo": FIFOScheduler,
    "asha": lambda: ASHAScheduler(metric="loss", mode=Mode.MIN, max_t=9, reduction_factor=3),
    "asha_promotion": lambda: ASHAPromotionScheduler(
        metric="loss", mode=Mode.MIN, max_t=9, reduction_factor=3
    ),
    "asha_brackets": lambda: ASHAScheduler(
        metric="loss", mode=Mode.MIN, max_t=27, reduction_factor=3, brackets=3
    ),
    "hyperband": lambda: HyperBandScheduler(
        metric="loss", mode=Mode.MIN, max_t=9, reduction_factor=3
    ),
    "hyperband_for_bohb": lambda: HyperBandForBOHB(
        metric="loss", mode=Mode.MIN, max_t=9, reduction_factor=3
    ),
    "median": lambda: MedianStoppingRule(
        metric="loss", mode=Mode.MIN, grace_period=1, min_samples_required=2
    ),
    "pbt": lambda: PopulationBasedTraining(
        metric="loss",
        mode=Mode.MIN,
        perturbation_interval=2,
        hyperparam_mutations={"n": [0, 1, 2, 3]},
        quantile_fraction=0.5,
        seed=3,
    ),
    "pbt_synch": lambda: PopulationBasedTraining(
        metric="loss",
        mode=Mode.MIN,
        perturbation_interval=2,
        hyperparam_mutations={"n": [0, 1, 2, 3]},
        quantile_fraction=0.5,
        seed=3,
        synch=True,
    ),
    "pb2": lambda: PB2(
        metric="loss",
        mode=Mode.MIN,
        perturbation_interval=2,
        hyperparam_bounds={"n": [0, 3]},
        quantile_fraction=0.5,
        seed=3,
    ),
    "pb2_synch": lambda: PB2(
        metric="loss",
        mode=Mode.MIN,
        perturbation_interval=2,
        hyperparam_bounds={"n": [0, 3]},
        quantile_fraction=0.5,
        seed=3,
        synch=True,
    ),
    "patience_example": lambda: PatienceScheduler(metric="loss", mode=Mode.MIN, patience=2),
    "resource_changing": ResourceChangingScheduler,
    "resource_changing_top_job_asha": lambda: ResourceChangingScheduler(
        ASHAScheduler(metric="loss", mode=Mode.MIN, max_t=9, reduction_factor=3),
        DistributeResourcesToTopJob(increase_by={"CPU": 0.5}, increase_by_times=3),
    ),
    "resource_changing_bundles_pbt": lambda: ResourceChangingScheduler(
        PopulationBasedTraining(
            metric="loss",
            mode=Mode.MIN,
            perturbation_interval=2,
            hyperparam_mutations={"n": [0, 1, 2, 3]},
            seed=3,
        ),
        DistributeResources(add_bundles=True, reserve_resources={"CPU": 1.0}),
    ),
}


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_every_built_in_policy_keeps_the_protocol(name: str) -> None:
    check_policy(BUILT_IN[name], max_examples=40)


def test_a_pbt_replay_keeps_the_protocol_with_its_one_trial() -> None:
    """Ray's replay trains one schedule (a second trial is refused, as in
    Ray), so Hypothesis adds at most one."""
    check_policy(
        lambda: PopulationBasedTrainingReplay(
            policy_file="pbt_policy_t_00000.txt",
            config={"n": 1},
            changes=(PolicyChange(2, {"n": 2}), PolicyChange(4, {"n": 3})),
            experiment_tag="replay_pbt_policy_t_00000.txt",
        ),
        max_examples=40,
        max_trials=1,
    )


class PausesAndForgets(FIFOScheduler, frozen=True, kw_only=True, tag=True):
    """Pauses every trial at its first result and never resumes one."""

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        return self, PAUSE if result.get("training_iteration") == 1 else CONTINUE

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        return first_fitting(pending, (), fits)


_CALLS = [0]


class RemembersTheProcess(FIFOScheduler, frozen=True, kw_only=True, tag=True):
    """Keeps a count that comes from outside its events: not replayable."""

    seen: int = 0

    def on_trial_add(self, trial: TrialState) -> Self:
        _CALLS[0] += 1
        return msgspec.structs.replace(self, seen=_CALLS[0])


class KeepsAnUntypedTuple(FIFOScheduler, frozen=True, kw_only=True, tag=True):
    """An untyped field holding a tuple: its snapshot gives back a list."""

    last: object = None

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        return msgspec.structs.replace(self, last=(trial.trial_id, 1)), CONTINUE


@pytest.mark.parametrize(
    ("policy", "says"),
    [
        (PausesAndForgets, "trials never ended"),
        (RemembersTheProcess, "replayed on a new policy"),
        (KeepsAnUntypedTuple, "decoded from its snapshot"),
    ],
)
def test_a_broken_policy_is_caught_naming_the_rule(
    policy: Callable[[], TrialScheduler], says: str
) -> None:
    with pytest.raises(PolicyViolation, match=says):
        check_policy(policy, max_examples=40)


class PicksAnyone(FIFOScheduler, frozen=True, kw_only=True, tag=True):
    """Remembers every trial added and picks the first, whatever it is now."""

    added: tuple[str, ...] = ()

    def on_trial_add(self, trial: TrialState) -> Self:
        return msgspec.structs.replace(self, added=(*self.added, trial.trial_id))

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        return self.added[0] if self.added else None


def test_a_policy_that_picks_a_trial_not_waiting_is_caught() -> None:
    with pytest.raises(PolicyViolation, match="choose_trial_to_run picked"):
        check_policy(PicksAnyone, max_examples=40)
