"""Which Ticks an idle experiment logs (`core.experiment.idle`).

By hand: an idle Tick is left out; one that ends the time budget, pulls
trials or starts one is logged; an experiment that reads its run time
logs one every `HEARTBEAT_S`. Then a machine runs two experiments side
by side on the random event streams of `test_step_stateful`: one fed every
Tick, the other only those `tick_to_log` gives. They must make the same
decisions (equal commands, states equal but for `now`), the shorter log
must replay to the same commands, and the experiment must still end.
"""

from __future__ import annotations

import msgspec
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from tests.core.experiment.test_step import Run, config, searcher
from tests.core.experiment.test_step_stateful import (
    ExperimentMachine,
    Setup,
    setups,
)
from tunecore.core.experiment import ExperimentState, step
from tunecore.core.experiment.idle import HEARTBEAT_S, tick_to_log
from tunecore.core.stoppers import (
    AnyOf,
    BuiltinStopper,
    MaximumIterationStopper,
    SingleStopper,
    TimeoutStopper,
    times_out,
)
from tunecore.model import (
    ClusterResourcesChanged,
    Command,
    ExperimentEvent,
    ExperimentResumed,
    Rejection,
    Resources,
    ResultReported,
    Tick,
)

T0 = "trial_00000"


def running(cpus: int = 1, **overrides: object) -> Run:
    """An experiment whose first trial runs (the cluster known at 100 s)
    and whose other trials wait."""
    run = Run(config(**overrides), searcher=searcher(3))
    run.feed(ClusterResourcesChanged(at=100.0, total=Resources(cpu=cpus)))
    return run


def test_an_idle_tick_is_left_out() -> None:
    run = running()
    assert tick_to_log(run.state, 101.0) is None
    assert tick_to_log(run.state, 100.0 + 10 * HEARTBEAT_S) is None  # no run time read


def test_a_tick_that_ends_the_time_budget_is_logged() -> None:
    run = running(time_budget_s=30.0)
    run.feed(ResultReported(trial_id=T0, at=125.0, result={"x": 1}))
    assert tick_to_log(run.state, 129.0) is None
    assert tick_to_log(run.state, 130.0) == Tick(at=130.0)


def test_an_experiment_reading_its_run_time_logs_a_tick_every_heartbeat() -> None:
    for overrides, stopper in [
        ({"time_budget_s": 3600.0}, None),
        ({}, TimeoutStopper(timeout=3600.0)),
        ({}, AnyOf((MaximumIterationStopper(max_iter=9), TimeoutStopper(timeout=3600.0)))),
    ]:
        run = Run(config(**overrides), searcher=searcher(3), stopper=stopper)
        run.feed(ClusterResourcesChanged(at=100.0, total=Resources(cpu=1)))
        assert tick_to_log(run.state, 100.0 + HEARTBEAT_S / 2) is None, stopper
        assert tick_to_log(run.state, 100.0 + HEARTBEAT_S) == Tick(at=100.0 + HEARTBEAT_S)
    run = Run(config(), searcher=searcher(3), stopper=MaximumIterationStopper(max_iter=9))
    run.feed(ClusterResourcesChanged(at=100.0, total=Resources(cpu=1)))
    assert tick_to_log(run.state, 100.0 + 10 * HEARTBEAT_S) is None


def test_a_tick_that_pulls_trials_is_logged() -> None:
    """Before the cluster is known, a Tick still fills the waiting queue."""
    run = Run(config(), searcher=searcher(2))
    assert tick_to_log(run.state, 1.0) == Tick(at=1.0)
    run.feed(Tick(at=1.0))
    assert tick_to_log(run.state, 2.0) is None


def test_a_finished_experiment_takes_no_tick() -> None:
    run = running(time_budget_s=1.0)
    run.feed(Tick(at=101.0))
    assert run.state.done
    assert tick_to_log(run.state, 102.0) is None


# -- two experiments side by side ---------------------------------------------------


class LoggedTicksMachine(ExperimentMachine):
    """`ExperimentMachine`, whose log gets only the Ticks `tick_to_log`
    gives, beside a shadow experiment fed every Tick, as before."""

    shadow: ExperimentState | None
    shadow_commands: tuple[Command, ...]

    @initialize(
        setup=setups,
        budget=st.none() | st.floats(5.0, 60.0),
        timeout=st.none() | st.floats(5.0, 60.0),
    )
    def create(self, setup: Setup, budget: float | None, timeout: float | None) -> None:
        """The parent's experiment, now and then with a time budget or a
        `TimeoutStopper` (alone or beside the drawn stopper)."""
        config = msgspec.structs.replace(setup.config, time_budget_s=budget)
        stopper = setup.stopper
        if timeout is not None:
            limit = TimeoutStopper(timeout=timeout)
            parts = () if stopper is None else _parts(stopper)
            stopper = AnyOf((*parts, limit)) if parts else limit
        self.shadow = None  # the parent's first `feed` starts it
        super().create(msgspec.structs.replace(setup, config=config, stopper=stopper))

    def feed(self, event: ExperimentEvent) -> None:
        """`event` to both experiments: the same decisions."""
        shadow = self.state if self.shadow is None else self.shadow
        self.shadow, self.shadow_commands = _stepped(shadow, event)
        before = len(self.commands)
        super().feed(event)
        assert (self.commands[-1] if len(self.commands) > before else ()) == self.shadow_commands

    @rule(seconds=st.floats(0, 12))
    def tick(self, seconds: float) -> None:
        """A round without events: logged only if `tick_to_log` says so;
        the shadow takes it either way."""
        self.clock += seconds
        at = self.now()
        logged = tick_to_log(self.state, at)
        if logged is not None:
            assert logged == Tick(at=at)
            self.feed(logged)
            return
        assert self.shadow is not None
        self.shadow, self.shadow_commands = _stepped(self.shadow, Tick(at=at))
        assert self.shadow_commands == ()

    @rule(now=st.integers(0, 5).map(lambda n: n == 0))
    def crash_and_resume(self, now: bool) -> None:
        """The driver dies (no event says so) and a new one resumes from
        the log: it has missed the left-out Ticks, at most a heartbeat of
        run time when the experiment reads it. The shadow goes on from the
        logged state, as the resume does."""
        if not now or self.state.total is None:
            return
        assert self.shadow is not None
        if self.state.config.time_budget_s is not None or times_out(self.state.stopper):
            assert self.shadow.now - self.state.now < HEARTBEAT_S
        total = self.state.total
        self.shadow = self.state
        self.feed(ExperimentResumed(at=self.now()))
        self.feed(ClusterResourcesChanged(at=self.now(), total=total))

    @invariant()
    def the_same_decisions(self) -> None:
        """Equal states but for `now` (the commands: `feed`)."""
        assert self.shadow is not None
        assert msgspec.structs.replace(self.shadow, now=self.state.now) == self.state


def _parts(stopper: BuiltinStopper) -> tuple[SingleStopper, ...]:
    return stopper.stoppers if isinstance(stopper, AnyOf) else (stopper,)


def _stepped(
    state: ExperimentState, event: ExperimentEvent
) -> tuple[ExperimentState, tuple[Command, ...]]:
    """`step`, a rejection leaving the state as it was, without commands."""
    outcome = step(state, event)
    return (state, ()) if isinstance(outcome, Rejection) else outcome


LoggedTicksMachine.TestCase.settings = settings(
    ExperimentMachine.TestCase.settings, max_examples=80
)
test_logged_ticks = LoggedTicksMachine.TestCase
