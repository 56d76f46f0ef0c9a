"""Chained starts in the core (`core.experiment.chains`): which waiting
trials go behind a starting one, that they start nowhere else while it
runs, and first once it has ended."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.experiment.test_step import (
    FOREVER,
    T0,
    T1,
    T2,
    T3,
    Run,
    config,
    searcher,
    starts,
)
from tunecore.core.experiment import ExperimentState, new_experiment
from tunecore.core.experiment.chains import chain_for
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.stoppers import MaximumIterationStopper
from tunecore.model import (
    ChainRan,
    ChainTrials,
    CheckpointPolicy,
    Command,
    ExperimentResumed,
    ExperimentStopRequested,
    ExportFormat,
    JsonDict,
    Mode,
    Resources,
    ResultReported,
    StartTrial,
    TrialFailed,
    TrialStatus,
)

END: JsonDict = {"done": True, "__duplicate__": True}
T4, T5, T6, T7 = "trial_00004", "trial_00005", "trial_00006", "trial_00007"


def returns(run: Run, trial_id: str) -> tuple[Command, ...]:
    """The trial reports once and its function returns."""
    run.result(trial_id, training_iteration=1, score=1.0)
    return run.feed(ResultReported(trial_id=trial_id, at=run.tick(), result=END))


def chains(commands: tuple[Command, ...]) -> list[ChainTrials]:
    return [c for c in commands if isinstance(c, ChainTrials)]


def test_trials_left_waiting_are_chained_each_just_before_its_trials_start() -> None:
    run = Run(config(chain_starts=2), searcher=searcher(8))
    commands = run.cluster(cpu=2)
    assert commands[:4] == (
        ChainTrials(trial_id=T0, then=(T2, T3), until=(FOREVER, FOREVER)),
        StartTrial(trial_id=T0, until=FOREVER),
        ChainTrials(trial_id=T1, then=(T4, T5), until=(FOREVER, FOREVER)),
        StartTrial(trial_id=T1, until=FOREVER),
    )
    assert run.state.trials[T2].chained_behind == T0


def test_a_chain_never_holds_back_a_trial_that_fits_now() -> None:
    run = Run(config(chain_starts=2), searcher=searcher(2))
    assert starts(run.cluster(cpu=2)) == [T0, T1]  # both run at once, nothing chained


def test_chained_trials_start_first_once_their_trial_ended() -> None:
    run = Run(config(chain_starts=2), searcher=searcher(8))
    run.cluster(cpu=2)
    # T1 ends first: its own chained trial takes its place, not T2 (T0 runs).
    commands = returns(run, T1)
    assert starts(commands) == [T4]
    assert not chains(commands)
    assert run.state.trials[T4].chained_behind is None
    assert starts(returns(run, T0)) == [T2]
    assert starts(returns(run, T4)) == [T3]  # T0's, before T1's T5: the first waiting
    assert starts(returns(run, T2)) == [T5]
    commands = returns(run, T3)
    assert chains(commands) == [ChainTrials(trial_id=T6, then=(T7,), until=(FOREVER,))]


def test_a_place_that_frees_takes_an_unchained_trial_then_a_chained_one() -> None:
    run = Run(config(chain_starts=1, max_pending_trials=2), searcher=searcher(6))
    run.cluster(cpu=2)  # T0 and T1 run, T2 behind T0, T3 behind T1
    assert starts(returns(run, T0)) == [T2]
    commands = returns(run, T2)  # T3 is T1's, T1 runs: T4 comes first
    assert starts(commands) == [T4]
    assert chains(commands) == [ChainTrials(trial_id=T4, then=(T5,), until=(FOREVER,))]
    # T4 ends while T1 runs: its own chained trial T5 comes before T3 (T1's).
    assert starts(returns(run, T4)) == [T5]


def test_a_chained_trial_is_taken_when_nothing_else_would_fill_a_place() -> None:
    run = Run(config(chain_starts=1), searcher=searcher(3))
    run.cluster(cpu=2)  # T0 and T1 run, T2 chained behind T0
    assert run.state.trials[T2].chained_behind == T0
    assert starts(returns(run, T1)) == [T2]  # taken from T0's chain: no place waits
    assert run.state.trials[T2].chained_behind is None


def test_trials_a_worker_did_not_run_leave_the_chain() -> None:
    run = Run(config(chain_starts=2), searcher=searcher(8))
    run.cluster(cpu=2)  # T2, T3 behind T0; T4, T5 behind T1
    run.feed(ChainRan(trial_id=T0, at=run.tick(), ran=(T2,)))
    assert run.state.trials[T2].chained_behind == T0
    assert run.state.trials[T3].chained_behind is None
    assert starts(returns(run, T1)) == [T4]  # T3 is free now, but T1's chain comes first
    assert starts(returns(run, T0)) == [T2]
    assert starts(returns(run, T4)) == [T5]  # still chained behind the ended T1
    assert starts(returns(run, T2)) == [T3]


def test_a_failed_trial_frees_its_chain_to_start_in_its_place() -> None:
    run = Run(config(chain_starts=2, max_failures=1), searcher=searcher(4))
    run.cluster(cpu=1)
    commands = run.feed(TrialFailed(trial_id=T0, at=run.tick(), error="boom"))
    assert starts(commands) == [T1]  # the retried T0 waits behind its chain
    assert run.status(T0) is TrialStatus.PENDING


def test_a_resume_drops_every_chain() -> None:
    run = Run(config(chain_starts=2), searcher=searcher(4))
    run.cluster(cpu=1)
    run.feed(ExperimentStopRequested(at=run.tick(), reason="test"))
    run.feed(ExperimentResumed(at=run.tick()))
    assert all(trial.chained_behind is None for trial in run.state.trials.values())


@pytest.mark.parametrize(
    "overrides",
    [
        {"stopping_criterion": {"training_iteration": 3}},
        {"checkpoint_policy": CheckpointPolicy(frequency=2)},
        {"checkpoint_policy": CheckpointPolicy(at_end=True)},
        {"export_formats": (ExportFormat.CHECKPOINT,)},
    ],
    ids=["stopping criterion", "checkpoint frequency", "checkpoint at end", "export"],
)
def test_nothing_is_chained_where_a_trial_needs_the_driver_before_its_end(
    overrides: dict[str, object],
) -> None:
    run = Run(config(chain_starts=2, **overrides), searcher=searcher(4))
    assert not chains(run.cluster(cpu=2))


def test_nothing_is_chained_under_a_scheduler_that_decides_on_results() -> None:
    asha = ASHAScheduler(metric="score", mode=Mode.MAX, max_t=10)
    run = Run(config(chain_starts=2), scheduler=asha, searcher=searcher(4))
    assert not chains(run.cluster(cpu=2))


def test_nothing_is_chained_under_a_builtin_stopper() -> None:
    run = Run(config(chain_starts=2), searcher=searcher(4))
    run.state = new_experiment(
        config(chain_starts=2), searcher=searcher(4), stopper=MaximumIterationStopper(max_iter=3)
    )
    assert not chains(run.cluster(cpu=2))


# -- whole runs -----------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    trials=st.integers(1, 12),
    cpus=st.sampled_from([1.0, 2.0, 3.0]),
    chain_starts=st.integers(1, 4),
    moves=st.lists(
        st.tuples(st.integers(0, 99), st.sampled_from(["return", "fail", "chain ran"])),
        max_size=60,
    ),
    stop_at=st.none() | st.integers(0, 30),
)
def test_chains_only_reorder_starts_and_every_run_ends(
    trials: int,
    cpus: float,
    chain_starts: int,
    moves: list[tuple[int, str]],
    stop_at: int | None,
) -> None:
    """Trials return or fail in any order (a failure is retried once); the
    experiment may be stopped. Each step: a trial starts only when no
    trial chained behind an ended one waits (or it is one), never while its
    chain's trial runs; at the end every trial ran to its end, or the
    experiment was stopped."""
    run = Run(config(chain_starts=chain_starts, max_failures=1), searcher=searcher(trials))
    before = run.state
    check_starts(before, run.cluster(cpu=cpus), run.state, None)
    moves = [*moves, *[(0, "return")] * (3 * trials)]  # then drive to the end
    for number, (pick, move) in enumerate(moves):
        running = sorted(t for t, x in run.state.trials.items() if x.status is TrialStatus.RUNNING)
        if not running:
            break
        if number == stop_at:
            before = run.state
            commands = run.feed(ExperimentStopRequested(at=run.tick(), reason="t"))
            check_starts(before, commands, run.state, None)
            continue
        trial_id = running[pick % len(running)]
        before = run.state
        if move == "fail":
            commands = run.feed(TrialFailed(trial_id=trial_id, at=run.tick(), error="boom"))
        elif move == "chain ran":  # its worker ran the first `pick % 3` of its chain
            chain = [t for t in run.state.pending if run.state.trials[t].chained_behind == trial_id]
            ran = tuple(chain[: pick % 3])
            commands = run.feed(ChainRan(trial_id=trial_id, at=run.tick(), ran=ran))
        else:
            commands = returns(run, trial_id)
        check_starts(before, commands, run.state, trial_id)
    assert run.state.done
    statuses = {trial.status for trial in run.state.trials.values()}
    if stop_at is None or stop_at >= len(moves):
        assert statuses <= {TrialStatus.TERMINATED, TrialStatus.ERROR}
        assert len(run.state.trials) == trials


def check_starts(
    before: ExperimentState,
    commands: tuple[Command, ...],
    after: ExperimentState,
    ended: str | None,
) -> None:
    """Every trial started in a step (on an event about trial `ended`, if
    any) starts while no chained trial whose trial ended is left waiting;
    a chained one taken from a chain whose trial runs, only while no
    unchained trial is left waiting either."""

    def left_waiting(chained: bool, released: bool) -> list[str]:
        left = []
        for trial_id in before.pending:
            behind = before.trials[trial_id].chained_behind
            if after.trials[trial_id].status is not TrialStatus.PENDING:
                continue
            if not chained and behind is None:
                left.append(trial_id)
            elif chained and behind is not None:
                ended_there = (
                    behind == ended or before.trials[behind].status is not TrialStatus.RUNNING
                )
                if ended_there == released:
                    left.append(trial_id)
        return left

    for command in commands:
        if not isinstance(command, StartTrial):
            continue
        was = before.trials.get(command.trial_id)
        behind = None if was is None else was.chained_behind
        taken = (
            behind is not None
            and behind != ended
            and before.trials[behind].status is TrialStatus.RUNNING
        )
        if not (behind is not None and not taken):  # not a chained trial starting in its place
            assert not left_waiting(chained=True, released=True), command
        if taken:
            assert not left_waiting(chained=False, released=False), command


def test_a_chain_passes_over_trials_of_other_resources_and_chained_ones() -> None:
    run = Run(config(chain_starts=3), searcher=searcher(5))
    run.cluster(cpu=1)
    state = run.state
    t1, t2, t3, t4 = (state.trials[t] for t in (T1, T2, T3, T4))
    bigger = msgspec.structs.replace(t1.spec, resources=Resources(cpu=2))
    waiting = [
        msgspec.structs.replace(t1, spec=bigger, chained_behind=None),
        msgspec.structs.replace(t2, chained_behind="trial_99999"),
        msgspec.structs.replace(t3, chained_behind=None),
        msgspec.structs.replace(t4, chained_behind=None),
    ]
    assert chain_for(3, FIFOScheduler(), None, state.trials[T0], waiting) == (T3, T4)
