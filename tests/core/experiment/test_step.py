"""The experiment step, rule by rule, with hand-written event sequences."""

from __future__ import annotations

import math

import msgspec
import pytest

from tests.core.experiment.policies import ListSearcher, ScriptedScheduler
from tunecore.core.experiment import ExperimentConfig, ExperimentState, new_experiment, step
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.base import PAUSE, STOP, Exploit, TrialScheduler, Verdict
from tunecore.core.schedulers.hb_bohb import HyperBandForBOHB
from tunecore.core.schedulers.hyperband import HyperBandScheduler
from tunecore.core.schedulers.median import MedianStoppingRule
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.core.schedulers.resource_changing import ResourceChangingScheduler
from tunecore.core.search import ConcurrencyLimiter, Repeater
from tunecore.core.search.base import SearchPolicy
from tunecore.core.stoppers import BuiltinStopper
from tunecore.model import (
    CheckpointPolicy,
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    ClusterResourcesChanged,
    Command,
    ContinueTrial,
    Decision,
    ExperimentDone,
    ExperimentEvent,
    ExperimentInterrupted,
    ExperimentResumed,
    ExperimentStopRequested,
    Mode,
    PauseTrial,
    Rejection,
    ResetTrial,
    Resources,
    ResourcesUpdateRequested,
    ResultReported,
    SaveCheckpoint,
    SchedulerFailed,
    SearcherFailed,
    StartTrial,
    StopRequested,
    StopTrial,
    Tick,
    TrialFailed,
    TrialRequested,
    TrialStatus,
)


class Run:
    """An experiment driven by hand: `feed` steps and returns the commands."""

    def __init__(
        self,
        config: ExperimentConfig,
        scheduler: TrialScheduler | None = None,
        searcher: SearchPolicy | None = None,
        stopper: BuiltinStopper | None = None,
    ) -> None:
        self.state: ExperimentState = new_experiment(config, scheduler, searcher, stopper)
        self.clock = 100.0

    def feed(self, event: ExperimentEvent) -> tuple[Command, ...]:
        outcome = step(self.state, event)
        assert not isinstance(outcome, Rejection), outcome
        self.state, commands = outcome
        return commands

    def reject(self, event: ExperimentEvent) -> Rejection:
        before = self.state
        outcome = step(before, event)
        assert isinstance(outcome, Rejection), outcome
        assert self.state is before
        return outcome

    def cluster(self, cpu: float, gpu: float = 0.0) -> tuple[Command, ...]:
        return self.feed(ClusterResourcesChanged(at=self.tick(), total=Resources(cpu=cpu, gpu=gpu)))

    def result(self, trial_id: str, **metrics: float | bool) -> tuple[Command, ...]:
        return self.feed(ResultReported(trial_id=trial_id, at=self.tick(), result=dict(metrics)))

    def tick(self) -> float:
        self.clock += 1.0
        return self.clock

    def status(self, trial_id: str) -> TrialStatus:
        return self.state.trials[trial_id].status

    def statuses(self) -> dict[str, TrialStatus]:
        return {tid: t.status for tid, t in self.state.trials.items()}


def config(**overrides: object) -> ExperimentConfig:
    return msgspec.structs.replace(ExperimentConfig(trainable_name="train"), **overrides)


def searcher(count: int) -> ListSearcher:
    return ListSearcher(configs=tuple({"x": n} for n in range(count)))


def starts(commands: tuple[Command, ...]) -> list[str]:
    return [c.trial_id for c in commands if isinstance(c, StartTrial)]


T0, T1, T2, T3 = "trial_00000", "trial_00001", "trial_00002", "trial_00003"
FOREVER = ("training_iteration", math.inf)
"""FIFO's run-ahead horizon: a worker may train on until the trial ends."""


# -- starting trials ---------------------------------------------------------


def test_trials_start_in_order_while_cpus_last() -> None:
    run = Run(config(), searcher=searcher(3))
    assert starts(run.cluster(cpu=2)) == [T0, T1]
    assert run.state.pending == (T2,)
    assert run.state.used == Resources(cpu=2.0, gpu=0.0)
    assert run.state.running == 2


def test_a_finished_trial_frees_its_slot_for_the_next() -> None:
    run = Run(config(stopping_criterion={"training_iteration": 1}), searcher=searcher(3))
    run.cluster(cpu=2)
    commands = run.result(T0, training_iteration=1)
    assert commands == (StopTrial(trial_id=T0), StartTrial(trial_id=T2, until=FOREVER))
    assert run.status(T0) is TrialStatus.TERMINATED


def test_gpus_and_custom_resources_are_accounted() -> None:
    request = Resources(cpu=1, gpu=1, custom={"tpu": 2})
    run = Run(config(resources_per_trial=request), searcher=searcher(3))
    run.feed(ClusterResourcesChanged(at=1.0, total=Resources(cpu=8, gpu=4, custom={"tpu": 5})))
    assert run.state.running == 2  # the third would need 6 tpu
    assert run.state.used == Resources(cpu=2, gpu=2, custom={"tpu": 4})


def test_fractional_resources_never_drift_below_zero() -> None:
    run = Run(
        config(resources_per_trial=Resources(cpu=0.1), stopping_criterion={"i": 1}),
        searcher=searcher(10),
    )
    run.cluster(cpu=1)
    assert run.state.running == 10
    for n in range(10):
        run.result(f"trial_{n:05d}", i=1)
    assert run.state.used == Resources(cpu=0.0, gpu=0.0)
    assert run.state.done


def test_nothing_starts_before_the_cluster_is_known() -> None:
    run = Run(config(), searcher=searcher(2))
    assert run.feed(Tick(at=1.0)) == ()
    assert run.state.pending == (T0, T1)


def test_the_searcher_is_asked_only_while_fewer_than_the_bound_wait() -> None:
    run = Run(config(max_pending_trials=2), searcher=searcher(10))
    run.feed(Tick(at=1.0))
    assert run.state.created == 2
    run.cluster(cpu=1)  # one starts, so one more may wait
    assert run.state.created == 3
    assert run.state.pending == (T1, T2)


def test_max_trials_bounds_the_whole_experiment() -> None:
    run = Run(config(max_trials=2, stopping_criterion={"i": 1}), searcher=searcher(10))
    run.cluster(cpu=4)
    assert run.state.created == 2
    run.result(T0, i=1)
    commands = run.result(T1, i=1)
    assert commands[-1] == ExperimentDone()


def test_trial_ids_and_tags_come_from_the_prefix_and_the_searcher() -> None:
    run = Run(config(trial_id_prefix="abc"), searcher=searcher(1))
    run.cluster(cpu=1)
    trial = run.state.trials["abc_00000"]
    assert trial.spec.config == {"x": 0}
    assert trial.spec.evaluated_params == {"x": 0}
    assert trial.spec.experiment_tag == "0"


# -- results and decisions -----------------------------------------------------


def test_scheduler_and_searcher_hear_every_result_and_the_end() -> None:
    run = Run(config(stopping_criterion={"i": 2}), ScriptedScheduler(), searcher(1))
    run.cluster(cpu=1)
    run.result(T0, i=1)
    run.result(T0, i=2)
    scheduler = run.state.scheduler
    assert isinstance(scheduler, ScriptedScheduler)
    # The result that meets the criterion goes to on_trial_complete only.
    assert scheduler.calls == (f"add {T0}", f"result {T0}", f"complete {T0}")
    found = run.state.searcher
    assert isinstance(found, ListSearcher)
    assert found.results == (T0,)
    assert found.completed == ((T0, True, False),)


def test_a_scheduler_stop_marks_the_last_result_done() -> None:
    run = Run(config(), ScriptedScheduler(verdicts={T0: [STOP]}), searcher(1))
    run.cluster(cpu=1)
    assert run.result(T0, i=1, loss=0.5) == (StopTrial(trial_id=T0), ExperimentDone())
    trial = run.state.trials[T0]
    assert trial.last_result["done"] is True
    scheduler = run.state.scheduler
    assert isinstance(scheduler, ScriptedScheduler)
    assert scheduler.calls[-1] == f"complete {T0}"


def test_a_pause_saves_to_memory_and_releases_the_slot() -> None:
    run = Run(config(), ScriptedScheduler(verdicts={T0: [PAUSE]}), searcher(2))
    run.cluster(cpu=1)
    commands = run.result(T0, i=1)
    assert commands == (
        SaveCheckpoint(trial_id=T0, storage=CheckpointStorage.MEMORY),
        PauseTrial(trial_id=T0),
        StartTrial(trial_id=T1),
    )
    assert run.state.paused == (T0,)
    assert run.state.saves == 1


def test_a_paused_trial_resumes_from_its_memory_checkpoint_once_saved() -> None:
    run = Run(
        config(stopping_criterion={"i": 2}), ScriptedScheduler(verdicts={T0: [PAUSE]}), searcher(2)
    )
    run.cluster(cpu=1)
    run.result(T0, i=1)
    memory = CheckpointRef(storage=CheckpointStorage.MEMORY, path="obj-1", training_iteration=1)
    assert run.feed(CheckpointSaved(trial_id=T0, at=run.tick(), checkpoint=memory)) == ()
    commands = run.result(T1, i=2)
    assert commands == (StopTrial(trial_id=T1), StartTrial(trial_id=T0, restore_from=memory))


def test_verdict_checkpoint_forces_a_persistent_save() -> None:
    verdict = Verdict(decision=Decision.CONTINUE, checkpoint=True)
    run = Run(config(), ScriptedScheduler(verdicts={T0: [verdict]}), searcher(1))
    run.cluster(cpu=1)
    assert run.result(T0, i=1) == (
        SaveCheckpoint(trial_id=T0, storage=CheckpointStorage.PERSISTENT),
        ContinueTrial(trial_id=T0),
    )


def test_an_exploit_resets_the_trial_onto_the_donor_checkpoint() -> None:
    donor = CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/t1/ckpt", metrics={"i": 3})
    exploit = Exploit(
        donor_id=T1, config={"lr": 0.2}, experiment_tag="0@perturbed", restore_from=donor
    )
    verdict = Verdict(decision=Decision.CONTINUE, exploit=exploit)
    run = Run(config(), ScriptedScheduler(verdicts={T0: [verdict]}), searcher(2))
    run.cluster(cpu=2)
    assert run.result(T0, i=1) == (
        ResetTrial(
            trial_id=T0, config={"lr": 0.2}, experiment_tag="0@perturbed", restore_from=donor
        ),
        ContinueTrial(trial_id=T0),
    )
    trial = run.state.trials[T0]
    assert trial.spec.config == {"lr": 0.2}
    assert trial.restoring_from == donor
    assert trial.status is TrialStatus.RUNNING


def test_checkpoint_at_end_is_saved_before_the_experiment_ends() -> None:
    policy = CheckpointPolicy(at_end=True)
    run = Run(config(stopping_criterion={"i": 1}, checkpoint_policy=policy), searcher=searcher(1))
    run.cluster(cpu=1)
    commands = run.result(T0, i=1)
    assert commands == (
        SaveCheckpoint(trial_id=T0, storage=CheckpointStorage.PERSISTENT),
        StopTrial(trial_id=T0),
    )
    assert not run.state.done  # the save is still in flight
    saved = CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/c", training_iteration=1)
    assert run.feed(CheckpointSaved(trial_id=T0, at=run.tick(), checkpoint=saved)) == (
        ExperimentDone(),
    )


def test_strict_metric_checking_fails_a_result_without_the_metric() -> None:
    run = Run(config(metric="loss", mode=Mode.MIN), searcher=searcher(1))
    run.cluster(cpu=1)
    commands = run.result(T0, training_iteration=1, accuracy=0.5)
    assert run.status(T0) is TrialStatus.ERROR
    stop = commands[0]
    assert isinstance(stop, StopTrial)
    assert stop.error is not None
    assert "without the metric 'loss'" in stop.error
    assert "keys present: accuracy, training_iteration" in stop.error


@pytest.mark.parametrize(
    ("scheduler", "metric", "owner"),
    [
        (ASHAScheduler(metric="acc", mode=Mode.MAX), "acc", "ASHAScheduler"),
        (MedianStoppingRule(metric="acc", mode=Mode.MAX), "acc", "MedianStoppingRule"),
        # Given only a mode, Ray's anonymous `_metric`, which Ray 2.60's
        # HyperBand (halving: `KeyError`) and PBT (`require_attrs`:
        # `RuntimeError`) fail the run without: here the trial fails.
        (HyperBandScheduler(mode=Mode.MAX, max_t=8), "_metric", "HyperBandScheduler"),
        (HyperBandForBOHB(mode=Mode.MAX, max_t=8), "_metric", "HyperBandForBOHB"),
        (
            PopulationBasedTraining(mode=Mode.MAX, hyperparam_mutations={"lr": [0.1, 0.2]}),
            "_metric",
            "PopulationBasedTraining",
        ),
        (
            ResourceChangingScheduler(base_scheduler=HyperBandScheduler(mode=Mode.MAX)),
            "_metric",
            "ResourceChangingScheduler",
        ),
    ],
)
def test_strict_metric_checking_covers_a_metric_given_only_to_the_scheduler(
    scheduler: TrialScheduler, metric: str, owner: str
) -> None:
    run = Run(config(), scheduler=scheduler, searcher=searcher(1))
    assert run.state.config.checked_metrics == {metric: owner}
    run.cluster(cpu=1)
    commands = run.result(T0, training_iteration=1, loss=0.5)
    assert run.status(T0) is TrialStatus.ERROR
    stop = commands[0]
    assert isinstance(stop, StopTrial)
    assert stop.error is not None
    assert f"without the metric {metric!r} that {owner} expects" in stop.error


def test_a_scheduler_given_only_a_mode_acts_on_the_anonymous_metric() -> None:
    """As on Ray 2.60: the scheduler takes `_metric` (what a function's
    returned number is reported as), strict checking passes it over, and a
    result without it goes on, where one with it is judged."""
    run = Run(config(), scheduler=ASHAScheduler(mode=Mode.MAX, max_t=4), searcher=searcher(2))
    assert run.state.scheduler.metric == "_metric"  # type: ignore[attr-defined]
    assert run.state.config.checked_metrics == {}
    run.cluster(cpu=1)
    run.result(T0, training_iteration=4, loss=0.5)
    assert run.status(T0) is TrialStatus.RUNNING  # no _metric: ASHA does nothing
    commands = run.result(T0, training_iteration=4, _metric=0.5)
    assert run.status(T0) is TrialStatus.TERMINATED  # at max_t, with _metric: stopped
    assert any(isinstance(c, StopTrial) for c in commands)


def test_pbt_without_require_attrs_passes_over_a_result_without_the_anonymous_metric() -> None:
    pbt = PopulationBasedTraining(
        mode=Mode.MAX, hyperparam_mutations={"lr": [0.1, 0.2]}, require_attrs=False
    )
    run = Run(config(), scheduler=pbt, searcher=searcher(1))
    assert run.state.config.checked_metrics == {}
    run.cluster(cpu=1)
    run.result(T0, training_iteration=1, loss=0.5)
    assert run.status(T0) is TrialStatus.RUNNING


def test_strict_metric_checking_covers_a_limited_searchers_metric() -> None:
    limited = ConcurrencyLimiter[SearchPolicy](
        Repeater[SearchPolicy](searcher(1), repeat=1, metric="acc"), max_concurrent=1
    )
    run = Run(config(), searcher=limited)
    run.cluster(cpu=1)
    commands = run.result(T0, training_iteration=1, loss=0.5)
    stop = commands[0]
    assert isinstance(stop, StopTrial)
    assert stop.error is not None
    assert "without the metric 'acc' that ConcurrencyLimiter expects" in stop.error


def test_strict_metric_checking_can_be_turned_off() -> None:
    run = Run(
        config(metric="loss", mode=Mode.MIN, checked_metrics={}),
        searcher=searcher(1),
    )
    run.cluster(cpu=1)
    continues = (ContinueTrial(trial_id=T0, until=FOREVER),)
    assert run.result(T0, training_iteration=1, accuracy=0.5) == continues


def test_strict_metric_checking_spares_a_bare_done_result() -> None:
    run = Run(config(metric="loss", mode=Mode.MIN), searcher=searcher(1))
    run.cluster(cpu=1)
    assert run.result(T0, training_iteration=3, done=True) == (
        StopTrial(trial_id=T0),
        ExperimentDone(),
    )


def test_a_stopping_criterion_on_a_missing_metric_fails_the_trial() -> None:
    run = Run(config(stopping_criterion={"loss": 0.1}), searcher=searcher(1))
    run.cluster(cpu=1)
    run.result(T0, accuracy=0.5)
    trial = run.state.trials[T0]
    assert trial.status is TrialStatus.ERROR
    assert trial.error_message is not None
    assert "'loss'" in trial.error_message
    assert "accuracy" in trial.error_message


# -- failures ------------------------------------------------------------------


def test_a_failure_within_max_failures_restarts_from_the_newest_persistent_checkpoint() -> None:
    run = Run(config(max_failures=1), searcher=searcher(1))
    run.cluster(cpu=1)
    saved = CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/c2", training_iteration=2)
    run.feed(ResultReported(trial_id=T0, at=run.tick(), result={"should_checkpoint": True}))
    run.feed(CheckpointSaved(trial_id=T0, at=run.tick(), checkpoint=saved))
    commands = run.feed(TrialFailed(trial_id=T0, at=run.tick(), error="boom"))
    assert len(commands) == 2
    assert isinstance(commands[0], StopTrial)
    assert commands[0].error is not None
    assert commands[0].error.startswith("Failure # 1 (occurred at ")
    assert commands[1] == StartTrial(trial_id=T0, restore_from=saved, until=FOREVER)
    assert run.state.trials[T0].num_failures == 1


def test_the_failure_past_max_failures_is_an_error_everyone_hears_of() -> None:
    run = Run(config(max_failures=0), ScriptedScheduler(), searcher(2))
    run.cluster(cpu=1)
    commands = run.feed(TrialFailed(trial_id=T0, at=run.tick(), error="boom"))
    assert run.status(T0) is TrialStatus.ERROR
    assert starts(commands) == [T1]  # the rest of the experiment goes on
    scheduler = run.state.scheduler
    assert isinstance(scheduler, ScriptedScheduler)
    assert f"error {T0}" in scheduler.calls
    found = run.state.searcher
    assert isinstance(found, ListSearcher)
    assert found.completed == ((T0, False, True),)


def test_max_failures_minus_one_retries_forever() -> None:
    run = Run(config(max_failures=-1), searcher=searcher(1))
    run.cluster(cpu=1)
    for _ in range(25):
        commands = run.feed(TrialFailed(trial_id=T0, at=run.tick(), error="flaky"))
        assert starts(commands) == [T0]
    assert run.state.trials[T0].num_failures == 25


def test_fail_fast_stops_everything_on_the_first_error() -> None:
    run = Run(config(fail_fast=True), searcher=searcher(4))
    run.cluster(cpu=2)
    commands = run.feed(TrialFailed(trial_id=T0, at=run.tick(), error="boom"))
    assert run.statuses() == {
        T0: TrialStatus.ERROR,
        T1: TrialStatus.TERMINATED,
        T2: TrialStatus.TERMINATED,
        T3: TrialStatus.TERMINATED,
    }
    done = commands[-1]
    assert isinstance(done, ExperimentDone)
    assert done.error is not None
    assert done.error.startswith(f"fail_fast: trial {T0} failed: boom")
    assert run.state.done


# -- stop requests and experiment-wide limits ----------------------------------


def test_stop_requests_follow_the_seed_for_each_status() -> None:
    run = Run(config(), ScriptedScheduler(verdicts={T1: [PAUSE]}, resume_paused=False), searcher(4))
    run.cluster(cpu=2)
    run.result(T1, i=1)  # T1 pauses, T2 takes its slot; T3 waits
    assert run.statuses() == {
        T0: TrialStatus.RUNNING,
        T1: TrialStatus.PAUSED,
        T2: TrialStatus.RUNNING,
        T3: TrialStatus.PENDING,
    }
    run.result(T0, i=1, loss=0.3)
    run.feed(StopRequested(trial_id=T3, at=run.tick()))
    run.feed(StopRequested(trial_id=T1, at=run.tick()))
    run.feed(StopRequested(trial_id=T0, at=run.tick()))
    scheduler = run.state.scheduler
    assert isinstance(scheduler, ScriptedScheduler)
    assert f"complete {T0}" in scheduler.calls  # it was running: it completes
    assert f"remove {T1}" in scheduler.calls  # paused or pending: removed
    assert f"remove {T3}" in scheduler.calls
    found = run.state.searcher
    assert isinstance(found, ListSearcher)
    assert (T0, True, False) in found.completed
    assert (T3, False, False) in found.completed
    assert run.state.trials[T0].last_result["done"] is True


def test_the_time_budget_stops_the_experiment_on_a_tick() -> None:
    run = Run(config(time_budget_s=10.0), searcher=searcher(3))
    run.feed(ClusterResourcesChanged(at=0.0, total=Resources(cpu=1)))
    assert run.feed(Tick(at=9.0)) == ()
    commands = run.feed(Tick(at=10.0))
    assert commands == (
        StopTrial(trial_id=T0),
        StopTrial(trial_id=T1),
        StopTrial(trial_id=T2),
        ExperimentDone(),
    )
    assert run.state.stopping == "the time budget of 10 s is used up"


def test_a_result_after_the_time_budget_stops_its_trial_without_continuing_it() -> None:
    """The result is taken (the trial ends on it) but the trial is not
    told to train on before its stop: no worker trains past the budget."""
    run = Run(config(time_budget_s=10.0), searcher=searcher(2))
    run.feed(ClusterResourcesChanged(at=0.0, total=Resources(cpu=2)))
    commands = run.feed(ResultReported(trial_id=T0, at=12.0, result={"i": 1}))
    assert commands == (StopTrial(trial_id=T0), StopTrial(trial_id=T1), ExperimentDone())
    assert run.state.trials[T0].last_result["i"] == 1


def test_an_experiment_stop_request_ends_it_cleanly() -> None:
    run = Run(config(), searcher=searcher(2))
    run.cluster(cpu=1)
    commands = run.feed(ExperimentStopRequested(at=run.tick(), reason="stop"))
    assert commands[-1] == ExperimentDone()
    assert run.state.done
    assert set(run.statuses().values()) == {TrialStatus.TERMINATED}


def test_an_interrupt_ends_the_experiment_but_finishes_no_trial() -> None:
    policy = CheckpointPolicy(at_end=True)
    run = Run(config(checkpoint_policy=policy), searcher=searcher(3))
    run.cluster(cpu=2)
    run.result(T0, i=1)
    commands = run.feed(ExperimentInterrupted(at=run.tick(), reason="Ctrl-C"))
    assert commands == (ExperimentDone(),)
    assert run.state.done
    assert run.statuses() == {
        T0: TrialStatus.PENDING,
        T1: TrialStatus.PENDING,
        T2: TrialStatus.PENDING,
    }
    assert run.state.running == 0
    assert run.state.saves == 0
    # A resume runs them on, from where they were.
    run.feed(ExperimentResumed(at=run.tick()))
    run.cluster(cpu=2)
    assert run.status(T0) is TrialStatus.RUNNING
    assert run.state.trials[T0].last_result["i"] == 1


@pytest.mark.parametrize("kind", [SearcherFailed, SchedulerFailed])
def test_a_policy_failure_ends_the_experiment_and_a_resume_runs_its_trials_again(
    kind: type[SearcherFailed | SchedulerFailed],
) -> None:
    """As in Ray Tune: the running trial restarts from its checkpoint, the
    one that never ran starts; both under their ids."""
    run = Run(config(), searcher=searcher(2))
    run.cluster(cpu=1)
    saved = CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="/c1", training_iteration=1)
    run.feed(ResultReported(trial_id=T0, at=run.tick(), result={"should_checkpoint": True}))
    run.feed(CheckpointSaved(trial_id=T0, at=run.tick(), checkpoint=saved))
    run.result(T0, i=2)
    commands = run.feed(kind(at=run.tick(), error="ValueError: no", resumable=True))
    role = "searcher" if kind is SearcherFailed else "scheduler"
    assert commands == (ExperimentDone(error=f"The {role} failed: ValueError: no"),)
    assert run.statuses() == {T0: TrialStatus.PENDING, T1: TrialStatus.PENDING}
    run.feed(ExperimentResumed(at=run.tick()))
    assert run.cluster(cpu=1) == (StartTrial(trial_id=T0, restore_from=saved, until=FOREVER),)
    run.result(T0, i=3, done=True)
    assert run.status(T1) is TrialStatus.RUNNING


@pytest.mark.parametrize("kind", [SearcherFailed, SchedulerFailed])
def test_a_policy_failure_logged_before_it_left_trials_to_a_resume_stops_them(
    kind: type[SearcherFailed | SchedulerFailed],
) -> None:
    """A log from before `resumable` replays as it ran: its trials were
    stopped for good, and a resume runs none of them."""
    run = Run(config(), searcher=searcher(2))
    run.cluster(cpu=1)
    run.result(T0, i=1)
    run.feed(kind(at=run.tick(), error="ValueError: no"))
    assert run.statuses() == {T0: TrialStatus.TERMINATED, T1: TrialStatus.TERMINATED}
    assert run.state.done
    assert run.feed(ExperimentResumed(at=run.tick())) == (ExperimentDone(),)  # nothing to run
    assert run.statuses() == {T0: TrialStatus.TERMINATED, T1: TrialStatus.TERMINATED}


def test_an_experiment_without_a_searcher_waits_for_requests() -> None:
    run = Run(config(stopping_criterion={"i": 1}))
    assert run.cluster(cpu=1) == ()
    assert not run.state.done
    assert starts(
        run.feed(TrialRequested(at=run.tick(), config={"a": 1}, experiment_tag="mine"))
    ) == [T0]
    assert run.state.trials[T0].spec.experiment_tag == "mine"
    assert run.result(T0, i=1) == (StopTrial(trial_id=T0), ExperimentDone())


# -- dead ends and resources -----------------------------------------------------


def test_a_trial_that_can_never_fit_errors_and_the_others_run() -> None:
    run = Run(config(resources_per_trial=Resources(cpu=4)), searcher=searcher(1))
    commands = run.cluster(cpu=2)
    trial = run.state.trials[T0]
    assert trial.status is TrialStatus.ERROR
    assert trial.error_message == (
        "Insufficient cluster resources to launch trial: the trial requested "
        "4 CPUs, 0 GPUs but the whole cluster has 2 CPUs, 0 GPUs. "
        "Lower the trial's resources (resources_per_trial) or add nodes to the cluster."
    )
    assert commands[-1] == ExperimentDone()


def test_paused_trials_nothing_resumes_are_a_dead_end_with_a_message() -> None:
    scheduler = ScriptedScheduler(verdicts={T0: [PAUSE]}, resume_paused=False)
    run = Run(config(), scheduler, searcher(1))
    run.cluster(cpu=1)
    run.result(T0, i=1)
    memory = CheckpointRef(storage=CheckpointStorage.MEMORY, path="m")
    commands = run.feed(CheckpointSaved(trial_id=T0, at=run.tick(), checkpoint=memory))
    done = commands[-1]
    assert isinstance(done, ExperimentDone)
    assert done.error is not None
    assert done.error.startswith("There are paused trials, but no pending trials")
    assert T0 in done.error
    assert run.status(T0) is TrialStatus.TERMINATED


def test_resources_of_a_waiting_trial_can_change_but_not_of_a_running_one() -> None:
    run = Run(config(), searcher=searcher(2))
    run.cluster(cpu=1)
    bigger = Resources(cpu=2)
    rejection = run.reject(ResourcesUpdateRequested(trial_id=T0, at=run.tick(), resources=bigger))
    assert "cannot update resources while the trial is running" in rejection.reason
    run.feed(ResourcesUpdateRequested(trial_id=T1, at=run.tick(), resources=bigger))
    assert run.status(T1) is TrialStatus.ERROR  # 2 CPUs can never fit a 1-CPU cluster


# -- rejections ----------------------------------------------------------------


def test_illegal_events_are_rejected_and_change_nothing() -> None:
    run = Run(config(stopping_criterion={"i": 1}), searcher=searcher(2))
    run.cluster(cpu=1)
    assert (
        "no trial 'nope'" in run.reject(ResultReported(trial_id="nope", at=1.0, result={})).reason
    )
    pending = run.reject(ResultReported(trial_id=T1, at=run.tick(), result={"i": 1}))
    assert pending.status is TrialStatus.PENDING
    run.result(T0, i=1)
    run.result(T1, i=1)
    assert run.state.done
    assert run.reject(Tick(at=run.tick())).reason == "the experiment is over"


def test_a_stopping_experiment_refuses_new_trials() -> None:
    run = Run(config(), searcher=searcher(1))
    run.cluster(cpu=1)
    run.feed(ResultReported(trial_id=T0, at=run.tick(), result={"should_checkpoint": True}))
    run.feed(ExperimentStopRequested(at=run.tick()))
    assert run.state.stopping == "stop requested"
    rejection = run.reject(TrialRequested(at=run.tick(), config={}))
    assert "stopping" in rejection.reason


@pytest.mark.parametrize("metric", ["loss", None])
def test_the_same_events_give_the_same_states_and_commands(metric: str | None) -> None:
    events: list[ExperimentEvent] = [
        ClusterResourcesChanged(at=1.0, total=Resources(cpu=2)),
        ResultReported(trial_id=T0, at=2.0, result={"loss": 0.5, "i": 1}),
        TrialFailed(trial_id=T1, at=3.0, error="x"),
        ResultReported(trial_id=T0, at=4.0, result={"loss": 0.4, "i": 2, "done": True}),
    ]
    runs = []
    for _ in range(2):
        state = new_experiment(config(metric=metric, mode=Mode.MIN), searcher=searcher(3))
        trace: list[tuple[Command, ...]] = []
        for event in events:
            outcome = step(state, event)
            assert not isinstance(outcome, Rejection)
            state, commands = outcome
            trace.append(commands)
        runs.append((trace, dict(state.trials)))
    assert runs[0] == runs[1]
