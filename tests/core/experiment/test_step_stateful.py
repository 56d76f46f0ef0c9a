"""Whole experiments driven by random but legal event streams.

The machine plays the shell: it answers the saves the core asks for,
reports results and failures for running trials, restores, and sends the
requests a user may send, and its trials' functions return (the end
marker) under the built-in stoppers. After every step the invariants
check the bookkeeping against the trials themselves and every command
against the status of its trial, and an end against what the stopper
heard of it (`check_end_heard`). At the end the same events are replayed from scratch
(determinism), and the experiment is driven to its end (liveness).
"""

from __future__ import annotations

import msgspec
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from msgspec import UNSET

from tests.core.experiment.policies import ListSearcher, ScriptedScheduler
from tunecore.core import resources
from tunecore.core.experiment import (
    ExperimentConfig,
    ExperimentState,
    new_experiment,
    step,
    step_with_changes,
)
from tunecore.core.experiment.horizons import run_ahead_until
from tunecore.core.experiment.snapshot import ExperimentSnapshot, decode_state, encode_state
from tunecore.core.results import flatten, is_end_marker, repeated_at_end
from tunecore.core.schedulers.base import CONTINUE, PAUSE, STOP, Verdict
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.stoppers import (
    AnyOf,
    BuiltinStopper,
    ExperimentPlateauStopper,
    MaximumIterationStopper,
    TrialPlateauStopper,
)
from tunecore.model import (
    AskScheduler,
    AskSearcher,
    ChainTrials,
    CheckpointPolicy,
    CheckpointRef,
    CheckpointSaved,
    ClusterResourcesChanged,
    Command,
    ContinueTrial,
    DeleteCheckpoint,
    DrawValues,
    ExperimentDone,
    ExperimentEvent,
    ExperimentInterrupted,
    ExperimentResumed,
    ExperimentStopRequested,
    JsonDict,
    PauseRequested,
    PauseTrial,
    Rejection,
    ResetTrial,
    Resources,
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
    TrialRestored,
    TrialState,
    TrialStatus,
)
from tunecore.model.codec import to_msgpack

SNAPSHOT = ExperimentSnapshot[ScriptedScheduler | FIFOScheduler, ListSearcher]

verdict_scripts = st.lists(st.sampled_from([CONTINUE, CONTINUE, CONTINUE, PAUSE, STOP]), max_size=4)

configs = st.builds(
    ExperimentConfig,
    trainable_name=st.just("train"),
    stopping_criterion=st.sampled_from(
        [{}, {"training_iteration": 3.0}, {"training_iteration": 6.0}]
    ),
    checkpoint_policy=st.builds(
        CheckpointPolicy,
        frequency=st.integers(0, 2),
        at_end=st.booleans(),
        num_to_keep=st.none() | st.integers(1, 2),
    ),
    resources_per_trial=st.sampled_from([Resources(cpu=1), Resources(cpu=0.5), Resources(cpu=2)]),
    max_failures=st.integers(-1, 2),
    fail_fast=st.integers(0, 5).map(lambda n: n == 0),
    max_pending_trials=st.integers(1, 4),
    chain_starts=st.integers(0, 3),
    end_repeats_result=st.sampled_from([None, False]),  # None: a new experiment's True
)


def plateaus(
    kind: type[ExperimentPlateauStopper | TrialPlateauStopper],
    stds: list[float],
    **counts: st.SearchStrategy[int],
) -> st.SearchStrategy[ExperimentPlateauStopper | TrialPlateauStopper]:
    """A plateau stopper on the machine's `loss`, tight or loose."""
    return st.builds(kind, metric=st.just("loss"), std=st.sampled_from(stds), **counts)


single_stoppers = st.one_of(
    st.builds(MaximumIterationStopper, max_iter=st.integers(1, 6)),
    plateaus(
        ExperimentPlateauStopper, [0.001, 0.5], top=st.integers(2, 3), patience=st.integers(0, 1)
    ),
    plateaus(
        TrialPlateauStopper,
        [0.01, 0.5],
        num_results=st.integers(1, 3),
        grace_period=st.integers(0, 3),
    ),
)
stoppers = (
    st.none()
    | single_stoppers
    | st.lists(single_stoppers, min_size=2, max_size=3).map(lambda parts: AnyOf(tuple(parts)))
)


def iteration_of(trial: TrialState) -> int:
    value = trial.last_result.get("training_iteration", 0)
    return value if isinstance(value, int) else 0


class Setup(msgspec.Struct, frozen=True):
    """What `ExperimentMachine.create` draws (`setups`): a machine that
    draws more draws this too."""

    config: ExperimentConfig
    trials: int
    scripted: bool
    scripts: list[list[Verdict]]
    cpus: float
    saves_fail: bool
    stopper: BuiltinStopper | None


setups = st.builds(
    Setup,
    config=configs,
    trials=st.integers(1, 6),
    scripted=st.booleans(),
    scripts=st.lists(verdict_scripts, min_size=6, max_size=6),
    cpus=st.sampled_from([1.0, 2.0, 3.0]),
    saves_fail=st.booleans(),
    stopper=stoppers,
)


class ExperimentMachine(RuleBasedStateMachine):
    state: ExperimentState
    initial: ExperimentState
    events: list[ExperimentEvent]
    commands: list[tuple[Command, ...]]
    clock: float
    paths: int
    saves_fail: bool

    @initialize(setup=setups)
    def create(self, setup: Setup) -> None:
        searcher = ListSearcher(configs=tuple({"n": n} for n in range(setup.trials)))
        scheduler = (
            ScriptedScheduler(verdicts={f"trial_{n:05d}": s for n, s in enumerate(setup.scripts)})
            if setup.scripted
            else FIFOScheduler()
        )
        self.state = new_experiment(setup.config, scheduler, searcher, setup.stopper)
        self.initial = self.state
        self.events = []
        self.commands = []
        self.clock = 0.0
        self.paths = 0
        self.saves_fail = setup.saves_fail
        self.feed(ClusterResourcesChanged(at=0.0, total=Resources(cpu=setup.cpus)))

    # -- feeding ------------------------------------------------------------

    def feed(self, event: ExperimentEvent) -> None:
        outcome = step_with_changes(self.state, event)
        if isinstance(outcome, Rejection):
            assert step(self.state, event) == outcome
            self.changed: frozenset[str] = frozenset()
            return
        before = self.state
        self.state, commands, self.changed = outcome
        check_changes_named(before, self.state, self.changed)
        self.events.append(event)
        self.commands.append(commands)
        check_commands(before, self.state, commands)
        if isinstance(event, ResultReported) and is_end_marker(event.result):
            check_end_heard(before, self.state, event.trial_id)

    def now(self) -> float:
        self.clock += 1.0
        return self.clock

    def ids(self, status: TrialStatus) -> list[str]:
        return sorted(t for t, trial in self.state.trials.items() if trial.status is status)

    def saving(self) -> list[str]:
        return sorted(t for t, trial in self.state.trials.items() if trial.saving_to)

    def answer_save(self, trial_id: str) -> None:
        trial = self.state.trials[trial_id]
        self.paths += 1
        checkpoint = CheckpointRef(
            storage=trial.saving_to[0],
            path=f"ckpt_{self.paths}",
            training_iteration=iteration_of(trial),
            metrics=trial.last_result,
        )
        self.feed(CheckpointSaved(trial_id=trial_id, at=self.now(), checkpoint=checkpoint))

    # -- rules ----------------------------------------------------------------

    @precondition(lambda self: bool(self.ids(TrialStatus.RUNNING)))
    @rule(data=st.data(), loss=st.floats(0, 1), done=st.integers(0, 7).map(lambda n: n == 0))
    def report(self, data: st.DataObject, loss: float, done: bool) -> None:
        trial_id = data.draw(st.sampled_from(self.ids(TrialStatus.RUNNING)))
        iteration = iteration_of(self.state.trials[trial_id]) + 1
        result: JsonDict = {"training_iteration": iteration, "loss": loss, "done": done}
        self.feed(ResultReported(trial_id=trial_id, at=self.now(), result=result))

    @precondition(lambda self: bool(self.ids(TrialStatus.RUNNING)))
    @rule(data=st.data(), flagged=st.booleans())
    def function_returns(self, data: st.DataObject, flagged: bool) -> None:
        """The trainable's function returned: its end marker (flagging a
        checkpoint it made after its last report, or not)."""
        trial_id = data.draw(st.sampled_from(self.ids(TrialStatus.RUNNING)))
        self.feed(ResultReported(trial_id=trial_id, at=self.now(), result=end_marker(flagged)))

    @precondition(lambda self: bool(self.saving()))
    @rule(data=st.data())
    def save_done(self, data: st.DataObject) -> None:
        self.answer_save(data.draw(st.sampled_from(self.saving())))

    @precondition(lambda self: bool(self.saving()))
    @rule(data=st.data())
    def save_fails(self, data: st.DataObject) -> None:
        """A save in flight fails, whatever the trial's status by now."""
        trial_id = data.draw(st.sampled_from(self.saving()))
        self.feed(TrialFailed(trial_id=trial_id, at=self.now(), error="save failed"))

    @rule(now=st.integers(0, 9).map(lambda n: n == 0))
    def interrupt_and_resume(self, now: bool) -> None:
        """Ctrl-C, then a new driver resumes."""
        if now and not self.state.done:
            total = self.state.total
            assert total is not None
            self.feed(ExperimentInterrupted(at=self.now(), reason="Ctrl-C"))
            interrupted = self.state
            assert (interrupted.done, interrupted.saves, interrupted.running) == (True, 0, 0)
            self.feed(ExperimentResumed(at=self.now()))
            self.feed(ClusterResourcesChanged(at=self.now(), total=total))

    @rule(
        kind=st.sampled_from([SearcherFailed, SchedulerFailed]),
        resumable=st.sampled_from([True, UNSET]),
        now=st.integers(0, 4).map(lambda n: n == 0),
    )
    def policy_fails(
        self, kind: type[SearcherFailed | SchedulerFailed], resumable: bool, now: bool
    ) -> None:
        """The user's searcher or scheduler object raises, at any point; a
        new driver resumes. Logged since `resumable` (True), its failure
        leaves every unfinished trial as an interrupt does, so the resume
        runs it again; in a log from before (unset) it stops them for good,
        as an experiment stop does."""
        if not now or self.state.done:
            return
        before, total = self.state, self.state.total
        assert total is not None
        event = kind(at=self.now(), error="ValueError: broke", resumable=resumable)
        self.feed(event)
        failed = self.state
        check_policy_failure(before, failed, event)
        if not failed.done:
            return  # a log from before: stopped trials wait for their saves
        self.feed(ExperimentResumed(at=self.now()))
        self.feed(ClusterResourcesChanged(at=self.now(), total=total))
        if self.state.stopping is not None:
            return  # a time budget or stopper spent before the failure ends the resumed run
        for trial_id, trial in failed.trials.items():
            assert self.state.trials[trial_id].is_finished == trial.is_finished, trial_id

    @precondition(lambda self: bool(self.ids(TrialStatus.RUNNING)))
    @rule(data=st.data())
    def worker_dies(self, data: st.DataObject) -> None:
        trial_id = data.draw(st.sampled_from(self.ids(TrialStatus.RUNNING)))
        self.feed(TrialFailed(trial_id=trial_id, at=self.now(), error="worker died"))

    @precondition(
        lambda self: any(t.restoring_from is not None for t in self.state.trials.values())
    )
    @rule(data=st.data())
    def restore_done(self, data: st.DataObject) -> None:
        restoring = sorted(t for t, x in self.state.trials.items() if x.restoring_from is not None)
        trial_id = data.draw(st.sampled_from(restoring))
        self.feed(TrialRestored(trial_id=trial_id, at=self.now()))

    @precondition(lambda self: bool(self.state.trials))
    @rule(data=st.data(), pause=st.booleans())
    def user_request(self, data: st.DataObject, pause: bool) -> None:
        trial_id = data.draw(st.sampled_from(sorted(self.state.trials.keys())))
        event = PauseRequested if pause else StopRequested
        self.feed(event(trial_id=trial_id, at=self.now()))

    @rule(seconds=st.floats(0, 5))
    def tick(self, seconds: float) -> None:
        self.clock += seconds
        self.feed(Tick(at=self.now()))

    @rule(n=st.integers(0, 100))
    def request_trial(self, n: int) -> None:
        self.feed(TrialRequested(at=self.now(), config={"requested": n}))

    @precondition(lambda self: self.state.total is not None)  # None: resumed, all done
    @rule(extra=st.sampled_from([0.5, 1.0, 2.0]))
    def cluster_grows(self, extra: float) -> None:
        total = self.state.total
        assert total is not None
        grown = Resources(cpu=total.cpu + extra)
        self.feed(ClusterResourcesChanged(at=self.now(), total=grown))

    @rule(now=st.integers(0, 9).map(lambda n: n == 0))
    def user_stops_everything(self, now: bool) -> None:
        if now:
            self.feed(ExperimentStopRequested(at=self.now(), reason="user"))

    # -- invariants ---------------------------------------------------------

    @invariant()
    def bookkeeping_matches_the_trials(self) -> None:
        state = self.state
        trials = state.trials
        order = state.index

        def in_order(status: TrialStatus) -> tuple[str, ...]:
            ids = [t for t, x in trials.items() if x.status is status]
            return tuple(sorted(ids, key=order.__getitem__))

        assert state.pending == in_order(TrialStatus.PENDING)
        assert state.paused == in_order(TrialStatus.PAUSED)
        assert state.running == len(in_order(TrialStatus.RUNNING))
        assert state.finished == sum(1 for x in trials.values() if x.is_finished)
        assert state.saves == sum(len(x.saving_to) for x in trials.values())
        assert state.created == len(trials) == len(order)

    @invariant()
    def chained_trials_wait_and_start_first_once_their_trial_ended(self) -> None:
        """A trial chained behind a running one waits; none chained behind
        an ended one waits while another trial started in its place."""
        for trial in self.state.trials.values():
            behind = trial.chained_behind
            if behind is None:
                continue
            assert trial.status is TrialStatus.PENDING, trial
            assert self.state.trials[behind].chained_behind is None

    @invariant()
    def resources_are_never_oversubscribed(self) -> None:
        state = self.state
        used = resources.nothing()
        for trial in state.trials.values():
            if trial.status is TrialStatus.RUNNING:
                used = resources.add(used, trial.spec.resources)
        assert used == state.used
        if state.total is None:  # a resume that found nothing left to run
            assert state.done
            assert state.running == 0
            return
        assert resources.fits(state.used, state.total), (state.used, state.total)

    @invariant()
    def the_whole_state_round_trips_through_msgpack(self) -> None:
        data = encode_state(self.state)
        decoded = decode_state(data, SNAPSHOT)
        assert decoded == self.state
        assert encode_state(decoded) == data

    def teardown(self) -> None:
        if not hasattr(self, "state"):
            return
        self.replay_gives_the_same_commands()
        self.drive_to_the_end()

    def replay_gives_the_same_commands(self) -> None:
        state = self.initial
        for event, expected in zip(self.events, self.commands, strict=True):
            outcome = step(state, event)
            assert not isinstance(outcome, Rejection)
            state, commands = outcome
            assert commands == expected
        assert dict(state.trials) == dict(self.state.trials)

    def is_done(self) -> bool:
        return self.state.done

    def drive_to_the_end(self) -> None:
        """A shell whose saves all work, or all fail, and trials that
        finish: every trial must end (liveness)."""
        for _ in range(500):
            if self.is_done():
                break
            if self.saving() and self.saves_fail:
                failing = self.saving()[0]
                self.feed(TrialFailed(trial_id=failing, at=self.now(), error="save failed"))
            elif self.saving():
                self.answer_save(self.saving()[0])
            elif self.ids(TrialStatus.RUNNING):
                trial_id = self.ids(TrialStatus.RUNNING)[0]
                result: JsonDict = {"training_iteration": 99, "loss": 0.0, "done": True}
                if len(self.events) % 2:  # half the trials end by returning
                    result = end_marker(flagged=False)
                self.feed(ResultReported(trial_id=trial_id, at=self.now(), result=result))
            else:
                self.feed(ClusterResourcesChanged(at=self.now(), total=Resources(cpu=8)))
                if not self.is_done() and not self.ids(TrialStatus.RUNNING):
                    self.feed(ExperimentStopRequested(at=self.now(), reason="drain"))
        assert self.state.done, self.state
        assert all(t.is_finished for t in self.state.trials.values())
        assert self.commands[-1][-1] == ExperimentDone(error=self.state.error)


def end_marker(flagged: bool) -> JsonDict:
    """A function trainable's end (Ray's `__duplicate__`)."""
    marker: JsonDict = {"done": True, "__duplicate__": True}
    return {**marker, "should_checkpoint": True} if flagged else marker


def check_end_heard(before: ExperimentState, after: ExperimentState, trial_id: str) -> None:
    """A function's end reaches the stopper as Ray 2.60 passes it, once, as
    the trial's last result marked `done`, in an experiment that says so;
    in one from before that (`end_repeats_result` not True) the stopper
    hears nothing of it, as it never did. Either way the trial ends (only
    a running trial's end is taken)."""
    trial = before.trials[trial_id]
    assert (trial.status, after.trials[trial_id].status) == (
        TrialStatus.RUNNING,
        TrialStatus.TERMINATED,
    )
    expected = before.stopper
    if expected is not None and before.config.end_repeats_result is True:
        expected, _ = expected.on_result(trial_id, flatten(repeated_at_end(trial)))
    assert after.stopper == expected


def check_commands(
    before: ExperimentState, after: ExperimentState, commands: tuple[Command, ...]
) -> None:
    """Every command is legal for the status its trial ends the step in, and
    one that hands a worker training carries the horizon of that state."""
    for position, command in enumerate(commands):
        if isinstance(command, ExperimentDone):
            assert position == len(commands) - 1
            assert after.done
            continue
        if isinstance(command, DrawValues | AskSearcher | AskScheduler):
            continue  # requests: `test_requests`
        trial = after.trials[command.trial_id]
        status = trial.status
        if isinstance(command, StartTrial | ContinueTrial | ResetTrial):
            assert status is TrialStatus.RUNNING, (command, trial)
            assert command.until == run_ahead_until(after, command.trial_id)
        elif isinstance(command, PauseTrial):
            assert status in (TrialStatus.PAUSED, TrialStatus.TERMINATED), (command, trial)
        elif isinstance(command, StopTrial):
            assert status is not TrialStatus.PAUSED or command.error is None, (command, trial)
        elif isinstance(command, SaveCheckpoint):
            was = before.trials.get(command.trial_id)
            assert was is not None
            assert len(trial.saving_to) > 0 or trial.is_finished, (command, trial)
        elif isinstance(command, DeleteCheckpoint):
            assert command.checkpoint not in trial.checkpoints.persistent
        elif isinstance(command, ChainTrials):
            check_chain(after, command, commands[position + 1])
    if after.total is not None:
        started = any(isinstance(c, StartTrial) for c in commands)
        if started:
            assert resources.fits(after.used, after.total), (after.used, after.total)


def check_policy_failure(
    before: ExperimentState, after: ExperimentState, event: SearcherFailed | SchedulerFailed
) -> None:
    """A policy object's failure, logged now (`resumable`), ends the
    experiment at once with its error and finishes no trial: running ones
    wait again, keeping their persistent checkpoints, nothing is saving,
    and the policies hear nothing. In a log from before, it is the stop it
    was: the same trials and commands as an experiment stop, with the
    error. An experiment stopping already only goes on stopping."""
    role = "searcher" if isinstance(event, SearcherFailed) else "scheduler"
    message = f"The {role} failed: {event.error}"
    if before.stopping is not None:
        assert after.trials == before.trials
        return
    assert after.error == (before.error or message)
    if event.resumable is not True:
        stopped = step(before, ExperimentStopRequested(at=event.at, reason=message))
        assert not isinstance(stopped, Rejection)
        assert dict(after.trials) == dict(stopped[0].trials)
        assert not any(t.status is TrialStatus.PENDING for t in after.trials.values())
        return
    assert (after.done, after.saves, after.running) == (True, 0, 0)
    assert (after.scheduler, after.searcher) == (before.scheduler, before.searcher)
    for trial_id, was in before.trials.items():
        trial = after.trials[trial_id]
        if was.is_finished:
            assert trial.is_finished, trial_id
            continue
        expected = TrialStatus.PENDING if was.status is TrialStatus.RUNNING else was.status
        assert trial.status is expected, (trial_id, was.status, trial.status)
        assert trial.checkpoints.persistent == was.checkpoints.persistent


def check_chain(after: ExperimentState, chain: ChainTrials, following: Command) -> None:
    """A chain comes right before its trial's start, behind a fresh trial
    of the same resources, and holds fresh waiting trials of the same
    resources, none chained elsewhere."""
    assert isinstance(following, StartTrial)
    assert following.trial_id == chain.trial_id
    assert chain.until == tuple(run_ahead_until(after, chained) for chained in chain.then)
    head = after.trials[chain.trial_id]
    assert 0 < len(chain.then) <= after.config.chain_starts
    assert head.chained_behind is None
    for chained_id in chain.then:
        trial = after.trials[chained_id]
        assert trial.status is TrialStatus.PENDING, trial
        assert trial.chained_behind == chain.trial_id
        assert trial.spec.resources == head.spec.resources
        assert (trial.num_failures, head.num_failures) == (0, 0)


def check_changes_named(
    before: ExperimentState, after: ExperimentState, changed: frozenset[str]
) -> None:
    """`step_with_changes` names every trial whose state the step created
    or replaced, and only trials of the experiment."""
    replaced = {t for t, trial in after.trials.items() if before.trials.get(t) is not trial}
    assert replaced <= changed, replaced - changed
    assert changed <= set(after.trials), changed - set(after.trials)


ExperimentMachine.TestCase.settings = settings(
    max_examples=120,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_experiments = ExperimentMachine.TestCase


def test_states_decode_to_the_same_trials() -> None:
    """A trial's msgpack bytes are stable: encode, decode, encode again."""
    state = new_experiment(ExperimentConfig(trainable_name="t"), searcher=ListSearcher(({},)))
    outcome = step(state, ClusterResourcesChanged(at=0.0, total=Resources(cpu=1)))
    assert not isinstance(outcome, Rejection)
    trial = outcome[0].trials["trial_00000"]
    packed = to_msgpack(trial)
    assert to_msgpack(msgspec.msgpack.decode(packed, type=TrialState)) == packed
