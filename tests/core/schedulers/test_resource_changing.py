"""`ResourceChangingScheduler` driven through the core: a resized trial is
paused, asks for its new resources and resumes with them; the base
scheduler's decisions stand; a user function's answers come on the
results; and replay and resume decide exactly as the run did."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunecore.core.experiment import new_experiment, step
from tunecore.core.experiment.snapshot import decode_state, encode_state
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.distribute import (
    AllocationFunction,
    DistributeResources,
    DistributeResourcesToTopJob,
)
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.core.schedulers.resource_changing import (
    ResourceChangingScheduler,
    allocation_wanted,
)
from tunecore.model import (
    Decision,
    ExperimentEvent,
    InvalidFieldError,
    Mode,
    Rejection,
    Resources,
    ResultReported,
    TrialStatus,
)
from tunecore.testing import PolicyDriver

RUNNING, PAUSED = TrialStatus.RUNNING, TrialStatus.PAUSED


class AnsweringDriver(PolicyDriver):
    """A driver that can also report a result with a user function's
    answer on it, as the shell logs it."""

    def answered(self, trial_id: str, cpus: float, **metrics: Any) -> Decision:
        iteration = self.trial(trial_id).last_result.get("training_iteration", 0)
        assert isinstance(iteration, int)
        result = {**metrics, "training_iteration": iteration + 1}
        event = ResultReported(
            trial_id=trial_id, at=self._tick(), result=result, allocation=Resources(cpu=cpus)
        )
        self._feed(event)
        status = self.status(trial_id)
        if status is RUNNING:
            return Decision.CONTINUE
        return Decision.PAUSE if status is PAUSED else Decision.STOP


def four_trials_on_eight_cpus(scheduler: ResourceChangingScheduler[Any]) -> PolicyDriver:
    driver = PolicyDriver(scheduler, cpus=8, metric="loss", mode="min")
    for _ in range(4):
        driver.add()
    return driver


def test_a_grown_trial_pauses_asks_for_more_and_resumes_with_it() -> None:
    driver = four_trials_on_eight_cpus(ResourceChangingScheduler())
    first = driver.trial_ids()[0]
    driver.result(first, loss=1.0)
    trial = driver.trial(first)
    assert trial.spec.resources == Resources(cpu=2.0)  # 8 CPUs over 4 trials
    assert driver.started() == [first]  # paused, then resumed at once: 5 CPUs fit in 8
    assert trial.status is RUNNING
    assert driver.state.used.cpu == 5.0
    driver.result(first, loss=0.5)  # no change: it goes on
    assert driver.started() == []


def test_nothing_changes_on_a_first_iteration_or_without_room() -> None:
    driver = four_trials_on_eight_cpus(ResourceChangingScheduler())
    first = driver.trial_ids()[0]
    assert driver.result(first, loss=1.0, training_iteration=0) is Decision.CONTINUE
    assert driver.trial(first).spec.resources == Resources(cpu=1.0)
    crowded = PolicyDriver(ResourceChangingScheduler(), cpus=2, metric="loss", mode="min")
    ids = [crowded.add(), crowded.add()]
    assert crowded.result(ids[0], loss=1.0) is Decision.CONTINUE
    assert crowded.trial(ids[0]).spec.resources == Resources(cpu=1.0)


def test_the_base_schedulers_stop_stands_and_nothing_is_resized() -> None:
    base = ASHAScheduler(max_t=2, grace_period=1, reduction_factor=2)
    driver = four_trials_on_eight_cpus(ResourceChangingScheduler(base))
    first = driver.trial_ids()[0]
    driver.result(first, loss=1.0)
    driver.result(first, loss=1.0)  # max_t reached: ASHA stops it
    assert driver.status(first) is TrialStatus.TERMINATED
    assert driver.trial(first).spec.resources == Resources(cpu=2.0)  # grown at iteration 1 only


def test_without_an_allocation_function_it_is_the_base_scheduler() -> None:
    driver = four_trials_on_eight_cpus(ResourceChangingScheduler(FIFOScheduler(), None))
    first = driver.trial_ids()[0]
    assert driver.result(first, loss=1.0) is Decision.CONTINUE
    assert driver.trial(first).spec.resources == Resources(cpu=1.0)


def test_top_job_grows_the_best_trial_only() -> None:
    driver = four_trials_on_eight_cpus(
        ResourceChangingScheduler(None, DistributeResourcesToTopJob())
    )
    ids = driver.trial_ids()
    for trial_id, loss in zip(ids, [3.0, 1.0, 2.0, 4.0], strict=True):
        driver.result(trial_id, loss=loss)
    # Ranked by the last result before each one: the first trial reports
    # while no trial has a loss (all rank as +inf, the first of them best)
    # and takes all 4 free CPUs; the others find nothing free.
    assert [driver.trial(t).spec.resources.cpu for t in ids] == [5.0, 1.0, 1.0, 1.0]


def test_a_user_function_is_asked_for_and_its_answer_decides() -> None:
    def grow(*_: object) -> None:
        return None

    driver = AnsweringDriver(
        ResourceChangingScheduler(resources_allocation_function=grow),
        cpus=4,
        metric="loss",
        mode="min",
    )
    first = driver.add()
    assert driver.result(first, loss=1.0) is Decision.CONTINUE
    assert allocation_wanted(driver.scheduler) == first  # the shell would call `grow` now
    assert driver.answered(first, 1.0, loss=1.0) is Decision.CONTINUE  # the same resources
    assert allocation_wanted(driver.scheduler) is None
    driver.answered(first, 3.0, loss=0.9)
    assert driver.trial(first).spec.resources == Resources(cpu=3.0)
    assert driver.started() == [first]


def test_a_function_is_kept_as_its_place_and_a_nested_scheduler_is_refused() -> None:
    def my_allocation(*_: object) -> None:
        return None

    scheduler = ResourceChangingScheduler(resources_allocation_function=my_allocation)
    place = scheduler.resources_allocation_function
    assert isinstance(place, AllocationFunction)
    assert place.func is my_allocation
    assert place.name == "my_allocation"
    decoded = decode_state(encode_state(PolicyDriver(scheduler, metric="loss", mode="min").state))
    decoded_place = decoded.scheduler.resources_allocation_function  # type: ignore[attr-defined]
    assert decoded_place == place
    assert decoded_place.func is None
    with pytest.raises(InvalidFieldError, match="base_scheduler"):
        ResourceChangingScheduler(ResourceChangingScheduler())
    with pytest.raises(InvalidFieldError, match="resources_allocation_function"):
        ResourceChangingScheduler(None, "even")  # type: ignore[arg-type]


def test_a_multi_bundle_base_needs_add_bundles() -> None:
    two = Resources(bundles=(Resources(cpu=1.0), Resources(cpu=1.0)))
    with pytest.raises(InvalidFieldError, match="add_bundles"):
        PolicyDriver(ResourceChangingScheduler(), resources_per_trial=two).add()
    driver = PolicyDriver(
        ResourceChangingScheduler(None, DistributeResources(add_bundles=True)),
        cpus=6,
        resources_per_trial=two,
    )
    first = driver.add()
    driver.result(first, loss=1.0)
    assert len(driver.trial(first).spec.resources.bundles) == 6


def test_metric_and_mode_come_from_the_base_scheduler_first() -> None:
    base = ASHAScheduler(metric="acc", mode=Mode.MAX)
    chosen = ResourceChangingScheduler(base, DistributeResourcesToTopJob()).with_objective(
        "loss", Mode.MIN
    )
    allocation = chosen.resources_allocation_function
    assert isinstance(allocation, DistributeResourcesToTopJob)
    assert (allocation.metric, allocation.mode, chosen.metric) == ("acc", Mode.MAX, "acc")


# -- replay and resume are exact ----------------------------------------------------

SCHEDULERS: dict[str, Callable[[], ResourceChangingScheduler[Any]]] = {
    "distribute": ResourceChangingScheduler,
    "top_job_under_asha": lambda: ResourceChangingScheduler(
        ASHAScheduler(max_t=6, grace_period=1, reduction_factor=2),
        DistributeResourcesToTopJob(increase_by={"CPU": 1.0}, increase_by_times=2),
    ),
    "user_function": lambda: ResourceChangingScheduler(resources_allocation_function=print),
}

steps = st.lists(
    st.tuples(st.integers(0, 5), st.floats(0, 10, allow_nan=False), st.integers(1, 4)),
    min_size=1,
    max_size=40,
)


def run(name: str, moves: list[tuple[int, float, int]]) -> AnsweringDriver:
    """Six trials on 6 CPUs; each move reports a loss for a running trial
    (its index among them), with an answer of `cpus` under a user function."""
    driver = AnsweringDriver(SCHEDULERS[name](), cpus=6, metric="loss", mode="min")
    for _ in range(6):
        driver.add()
    for index, loss, cpus in moves:
        running = driver.trial_ids(RUNNING)
        if not running:
            break
        trial_id = running[index % len(running)]
        if name == "user_function":
            driver.answered(trial_id, float(cpus), loss=loss)
        else:
            driver.result(trial_id, loss=loss)
    return driver


def fed(state: Any, events: list[ExperimentEvent]) -> Any:
    for event in events:
        outcome = step(state, event)
        assert not isinstance(outcome, Rejection), outcome
        state = outcome[0]
    return state


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
@settings(max_examples=40, deadline=None)
@given(moves=steps, cut=st.floats(0, 1))
def test_replay_and_resume_decide_as_the_run_did(
    name: str, moves: list[tuple[int, float, int]], cut: float
) -> None:
    driver = run(name, moves)
    final = driver.state
    assert driver.replay_on(SCHEDULERS[name]()) == final
    # Resume: the state snapshotted after any event, decoded, and fed the
    # rest, ends where the run ended (the scheduler's state included).
    at = int(cut * len(driver.events))
    fresh = new_experiment(final.config, scheduler=SCHEDULERS[name]())
    resumed = decode_state(encode_state(fed(fresh, driver.events[:at])))
    assert fed(resumed, driver.events[at:]) == final


def test_a_resize_is_replayed_from_the_log_without_the_function() -> None:
    """The run's events, fed to a scheduler whose function is gone (as a
    replay decodes it), take the same decisions: the answers are logged."""
    driver = run("user_function", [(0, 1.0, 3), (0, 0.5, 3), (1, 2.0, 2)])
    grown = {t.trial_id: t.spec.resources.cpu for t in driver.state.trials.values()}
    # The first two answers (3 CPUs) pause trials 0 and 1, which wait for room
    # (6 CPUs, all taken); the third goes to trial 3, then second of those running.
    assert grown == {"t_00000": 3.0, "t_00001": 3.0, "t_00002": 1.0, "t_00003": 2.0} | {
        "t_00004": 1.0,
        "t_00005": 1.0,
    }
    place = AllocationFunction(name="print")  # as decoded: a name, no function
    replayed = driver.replay_on(ResourceChangingScheduler(resources_allocation_function=place))
    assert replayed == driver.state


def test_results_are_held_to_what_the_base_scheduler_requires() -> None:
    """PBT's `require_attrs` under a resizing scheduler, as in Ray, whose
    `ResourceChangingScheduler` asks its base about every result."""
    base = PopulationBasedTraining(
        time_attr="t", metric="loss", mode="min", hyperparam_mutations={"lr": [0.1, 0.2]}
    )
    scheduler = ResourceChangingScheduler(base).with_objective(None, None)
    problem = scheduler.result_problem({"loss": 1.0})
    assert problem is not None
    assert problem.startswith("Cannot find time_attr t in trial result {'loss': 1.0}.")
    assert scheduler.result_problem({"loss": 1.0, "t": 2}) is None
    assert ResourceChangingScheduler().result_problem({}) is None
