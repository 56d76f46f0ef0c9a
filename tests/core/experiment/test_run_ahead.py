"""`run_ahead_until`: how far a worker may train on before the driver
answers, that `step` hands it to the shell on the commands that give a
worker training, and that the decisions up to there are CONTINUE indeed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.core.experiment.test_step import FOREVER, T0, Run, config, searcher
from tunecore.core.experiment import new_experiment
from tunecore.core.experiment.horizons import run_ahead_until
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.schedulers.median import MedianStoppingRule
from tunecore.core.stoppers.iteration import MaximumIterationStopper
from tunecore.model import (
    CheckpointPolicy,
    ContinueTrial,
    Horizon,
    Mode,
    StartTrial,
    TrialStatus,
)


class MyFifo(FIFOScheduler, frozen=True):
    """A user's subclass may decide on any result."""


def started(scheduler: object | None = None, **overrides: object) -> Run:
    run = Run(config(**overrides), scheduler, searcher(1))  # type: ignore[arg-type]
    run.cluster(cpu=1)
    return run


def test_fifo_runs_ahead_forever_and_others_not_at_all() -> None:
    assert run_ahead_until(started().state, T0) == FOREVER
    assert run_ahead_until(started(MyFifo()).state, T0) is None
    median = MedianStoppingRule(metric="loss", mode=Mode.MIN)
    assert run_ahead_until(started(median).state, T0) is None
    assert run_ahead_until(started().state, "no such trial") is None


def test_a_stopper_or_a_checkpoint_frequency_rules_it_out() -> None:
    with_stopper = started()
    with_stopper.state = new_experiment(
        config(), None, searcher(1), MaximumIterationStopper(max_iter=3)
    )
    with_stopper.cluster(cpu=1)
    assert run_ahead_until(with_stopper.state, T0) is None
    policy = CheckpointPolicy(frequency=2)
    assert run_ahead_until(started(checkpoint_policy=policy).state, T0) is None


@given(
    grace=st.integers(1, 4),
    factor=st.integers(2, 4),
    max_t=st.integers(5, 40),
    losses=st.lists(st.floats(0, 10), min_size=1, max_size=40),
)
def test_asha_answers_continue_below_its_horizon(
    grace: int, factor: int, max_t: int, losses: list[float]
) -> None:
    scheduler = ASHAScheduler(
        metric="loss", mode=Mode.MIN, grace_period=grace, reduction_factor=factor, max_t=max_t
    )
    run = Run(config(), scheduler, searcher(1))
    (start,) = run.cluster(cpu=1)
    assert isinstance(start, StartTrial)
    horizon: Horizon | None = start.until  # what the shell is told, and keeps to
    for iteration, loss in enumerate(losses, start=1):
        if run.status(T0) is not TrialStatus.RUNNING:
            break
        assert horizon is not None
        assert horizon == run_ahead_until(run.state, T0)
        key, threshold = horizon
        assert key == "training_iteration"
        commands = run.result(T0, training_iteration=iteration, loss=loss)
        if iteration < threshold:
            assert commands == (ContinueTrial(trial_id=T0, until=horizon),)
        if commands and isinstance(commands[-1], ContinueTrial):
            horizon = commands[-1].until


def test_every_command_that_trains_carries_the_horizon_of_the_state_it_leaves() -> None:
    run = Run(config(), None, searcher(2))
    assert run.cluster(cpu=1) == (StartTrial(trial_id=T0, until=FOREVER),)
    assert run.result(T0, training_iteration=1) == (ContinueTrial(trial_id=T0, until=FOREVER),)
    median = MedianStoppingRule(metric="loss", mode=Mode.MIN)
    no_run_ahead = Run(config(), median, searcher(1))
    assert no_run_ahead.cluster(cpu=1) == (StartTrial(trial_id=T0, until=None),)
