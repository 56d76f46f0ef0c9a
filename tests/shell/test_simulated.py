"""The simulated executor under the real loop: whole experiments in virtual
time, no sleeping, no wall clock.

Expected times and verdicts are worked out by hand or by an oracle that
rebuilds what it needs from the recorded events (ASHA's rungs, with numpy's
percentile for Ray's cutoff), never read back from the executor or the
scheduler.
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, Unpack

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunecore.core.experiment import ExperimentConfig, ExperimentState, new_experiment, step
from tunecore.core.experiment.snapshot import encode_state
from tunecore.core.schedulers.asha import ASHAPromotionScheduler, ASHAScheduler, Variant
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.core.search import BasicVariantGenerator, grid_search, uniform
from tunecore.model import (
    CheckpointPolicy,
    CheckpointRef,
    CheckpointSaved,
    CheckpointStorage,
    ExperimentEvent,
    InvalidFieldError,
    JsonDict,
    JsonValue,
    Location,
    Mode,
    Rejection,
    Resources,
    ResultReported,
    TrialFailed,
    TrialRestored,
    TrialStarted,
    TrialStatus,
)
from tunecore.model.codec import to_msgpack
from tunecore.shell.callbacks import CallbackList
from tunecore.shell.eventlog import LOG_FORMAT, EventLogWriter, LogHeader, RunSettings
from tunecore.shell.executors.base import Executor
from tunecore.shell.executors.simulated import SimulatedExecutor, SimulatedTrainable
from tunecore.shell.journal import Journal, SnapshotStore
from tunecore.shell.loop import ExperimentLoop
from tunecore.shell.run_plan import LoopParts, RunPlan
from tunecore.shell.storage.layout import ExperimentStorage
from tunecore.shell.storage.shared_storage import TOKEN_FILE
from tunecore.shell.trainable.worker import TrialContext

# -- running an experiment ---------------------------------------------------------


@dataclass(frozen=True)
class Reset:
    """A PBT exploit as the executor was asked to carry it out."""

    trial_id: str
    restore: CheckpointRef


Record = ExperimentEvent | Reset


class Options(TypedDict, total=False):
    """`SimulatedExecutor`'s keyword options besides `resources`."""

    start_time: float
    max_iterations: int
    start_seconds: float
    save_seconds: float


class RecordingExecutor(SimulatedExecutor):
    """Also records each `reset` (the restore an exploit continues from)."""

    def __init__(
        self,
        trainable: SimulatedTrainable,
        log: list[Record],
        cpus: float,
        **options: Unpack[Options],
    ) -> None:
        super().__init__(trainable, resources=Resources(cpu=cpus), **options)
        self._log = log

    def reset(
        self, trial_id: str, config: JsonDict, context: TrialContext, restore: CheckpointRef | None
    ) -> None:
        assert restore is not None
        self._log.append(Reset(trial_id, restore))
        super().reset(trial_id, config, context, restore)


def log_dir(root: Path) -> Path:
    """A new directory for a run's event log, beside `root`, not in it
    (tests list the trial files under `root`)."""
    return Path(tempfile.mkdtemp(dir=root.parent, prefix=f"{root.name}-log-"))


class RecordingJournal(Journal):
    """A real event log that also keeps each event in `log`, in the order
    the loop records them (between the executor's `reset`s)."""

    def __init__(self, directory: Path, initial: ExperimentState, log: list[Record]) -> None:
        header = LogHeader(
            format=LOG_FORMAT,
            tunecore_version="test",
            name="simulated",
            trainable="simulated",
            settings=RunSettings(),
            initial_state=encode_state(initial),
        )
        super().__init__(EventLogWriter.create(directory, header), SnapshotStore(directory))
        self._log = log

    def record(self, event: ExperimentEvent) -> None:
        super().record(event)
        self._log.append(event)


@dataclass
class Run:
    initial: ExperimentState
    final: ExperimentState
    executor: SimulatedExecutor
    log: list[Record]

    @property
    def events(self) -> list[ExperimentEvent]:
        return [r for r in self.log if not isinstance(r, Reset)]

    def trial_ids(self) -> list[str]:
        """In creation order."""
        return sorted(self.final.trials, key=lambda t: self.final.index[t])

    def reports(self, trial_id: str) -> list[ResultReported]:
        return [e for e in self.events if isinstance(e, ResultReported) and e.trial_id == trial_id]

    def results(self, trial_id: str) -> list[JsonDict]:
        return [e.result for e in self.reports(trial_id)]

    def last_iterations(self) -> dict[str, int]:
        """Each trial's last training_iteration."""
        last: dict[str, int] = {}
        for trial_id in self.trial_ids():
            iteration = self.results(trial_id)[-1]["training_iteration"]
            assert isinstance(iteration, int)
            last[trial_id] = iteration
        return last


def run(
    root: Path,
    trainable: SimulatedTrainable,
    space: dict[str, object],
    *,
    cpus: float,
    scheduler: TrialScheduler | None = None,
    samples: int = 1,
    seed: int = 0,
    stop: dict[str, float] | None = None,
    checkpoints: CheckpointPolicy | None = None,
    **options: Unpack[Options],
) -> Run:
    """One experiment through `ExperimentLoop`, every event recorded."""
    config = ExperimentConfig(
        trainable_name="simulated",
        metric="loss",
        mode=Mode.MIN,
        stopping_criterion=stop or {},
        checkpoint_policy=checkpoints or CheckpointPolicy(),
        trial_id_prefix="sim",
    )
    searcher = BasicVariantGenerator(space, num_samples=samples, seed=seed)
    initial = new_experiment(config, scheduler, searcher)
    log: list[Record] = []
    executor = RecordingExecutor(trainable, log, cpus, **options)
    parts = LoopParts(
        executor,
        ExperimentStorage(root, "simulated"),
        CallbackList(),
        journal=RecordingJournal(log_dir(root), initial, log),
        clock=executor.now,
    )
    loop = ExperimentLoop(initial, RunPlan(), parts)
    final = loop.run()
    assert final.done
    assert final.error is None
    return Run(initial, final, executor, log)


def assert_counters_continue(run: Run) -> None:
    """Every result continues the counters of what its trial last had: its
    own previous result, or the checkpoint a PBT exploit restored (which
    must be one a trial saved before). Resuming from a pause restores the
    trial's own memory checkpoint, so its counters go on without a gap."""
    saved = [
        (r.checkpoint.training_iteration, r.checkpoint.metrics)
        for r in run.log
        if isinstance(r, CheckpointSaved) and r.checkpoint.storage is CheckpointStorage.PERSISTENT
    ]
    iteration: dict[str, int] = {}
    total: dict[str, float] = {}
    for record in run.log:
        if isinstance(record, Reset):
            restore = record.restore
            assert (restore.training_iteration, restore.metrics) in saved
            iteration[record.trial_id] = restore.training_iteration
            seconds = restore.metrics["time_total_s"]
            assert isinstance(seconds, float)
            total[record.trial_id] = seconds
        elif isinstance(record, ResultReported):
            trial_id = record.trial_id
            now, this_iter, so_far = (
                record.result[key]
                for key in ("training_iteration", "time_this_iter_s", "time_total_s")
            )
            assert isinstance(now, int)
            assert isinstance(this_iter, float)
            assert isinstance(so_far, float)
            assert now == iteration.get(trial_id, 0) + 1
            assert so_far == total.get(trial_id, 0.0) + this_iter
            iteration[trial_id], total[trial_id] = now, so_far


def files_under(root: Path) -> set[str]:
    return {p.name for p in root.rglob("*") if p.is_file()}


# -- the executor on its own ----------------------------------------------------------


def context(trial_id: str, tmp_path: Path) -> TrialContext:
    return TrialContext(
        trial_id=trial_id,
        trial_name=trial_id,
        trial_dir=str(tmp_path / trial_id),
        experiment_dir=str(tmp_path),
    )


def test_completions_come_earliest_first_ties_in_issue_order(tmp_path: Path) -> None:
    seconds = {"a": 2.0, "b": 1.0}

    def trainable(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
        return {"loss": 1.0}, seconds[str(config["name"])]

    executor = SimulatedExecutor(
        trainable, resources=Resources(cpu=2), start_time=10.0, start_seconds=0.5
    )
    executor.start("a", Resources(), {"name": "a"}, context("a", tmp_path), None)
    executor.start("b", Resources(), {"name": "b"}, context("b", tmp_path), None)
    # Both are up at 10.5 (one batch, a first); b's result at 11.5, a's at 12.5.
    up = executor.next_events(1.0)
    assert up == [
        TrialStarted(trial_id="a", at=10.5, location=Location(hostname="simulated", pid=1)),
        TrialStarted(trial_id="b", at=10.5, location=Location(hostname="simulated", pid=2)),
    ]
    (first,) = executor.next_events(1.0)
    assert isinstance(first, ResultReported)
    assert (first.trial_id, first.at, executor.now()) == ("b", 11.5, 11.5)
    (second,) = executor.next_events(1.0)
    assert isinstance(second, ResultReported)
    assert (second.trial_id, second.at) == ("a", 12.5)
    assert second.result["training_iteration"] == 1
    assert second.result["time_total_s"] == 2.0
    # Nothing pending: no event, and the clock moves on as a real wait would.
    assert executor.next_events(3.0) == []
    assert executor.now() == 15.5


def test_a_pause_and_resume_continues_from_the_memory_checkpoint(tmp_path: Path) -> None:
    def trainable(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
        return {"loss": 1.0 / iteration}, 1.0

    executor = SimulatedExecutor(
        trainable, resources=Resources(), save_seconds=0.25, max_iterations=2
    )
    executor.start("t", Resources(), {}, context("t", tmp_path), None)
    executor.next_events(1.0)  # started at 0.0
    (result,) = executor.next_events(1.0)  # iteration 1 at 1.0
    assert isinstance(result, ResultReported)
    assert result.result["done"] is False
    executor.save_to_memory("t", 1, result.result)
    executor.release("t")
    # t's worker saves until 1.25, so a trial starting now needs another one.
    executor.start("u", Resources(), {}, context("u", tmp_path), None)
    (other,) = executor.next_events(1.0)
    assert other == TrialStarted(
        trial_id="u", at=1.0, location=Location(hostname="simulated", pid=2)
    )
    (saved,) = executor.next_events(1.0)
    assert isinstance(saved, CheckpointSaved)
    checkpoint = saved.checkpoint
    assert (checkpoint.path, checkpoint.training_iteration, saved.at) == ("memory://t/0", 1, 1.25)
    executor.start("t", Resources(), {}, context("t", tmp_path), checkpoint)
    started, restored = executor.next_events(1.0)
    assert started == TrialStarted(
        trial_id="t", at=1.25, location=Location(hostname="simulated", pid=1)
    )
    assert restored == TrialRestored(trial_id="t", at=1.25)
    (first_of_u,) = executor.next_events(1.0)
    assert isinstance(first_of_u, ResultReported)
    assert (first_of_u.trial_id, first_of_u.at) == ("u", 2.0)
    (resumed,) = executor.next_events(1.0)
    assert isinstance(resumed, ResultReported)
    assert resumed.at == 2.25
    assert resumed.result["training_iteration"] == 2
    assert resumed.result["iterations_since_restore"] == 1
    assert resumed.result["time_total_s"] == 2.0
    assert resumed.result["done"] is True  # max_iterations
    assert list(tmp_path.iterdir()) == []  # nothing on disk


def test_negative_seconds_fail_the_trial_naming_the_trial_and_iteration(tmp_path: Path) -> None:
    """A trainable's bad output is its trial's failure, as an exception
    from a real trainable is: the experiment goes on."""
    executor = SimulatedExecutor(lambda config, i: ({"loss": 0.0}, -1.0), resources=Resources())
    executor.start("t", Resources(), {}, context("t", tmp_path), None)
    events = []
    while batch := executor.next_events(0.0):
        events.extend(batch)
    assert [type(e).__name__ for e in events] == ["TrialStarted", "TrialFailed"]
    failed = events[-1]
    assert isinstance(failed, TrialFailed)
    assert re.search(r"trial t's iteration 1=-1\.0", failed.error)
    assert failed.at == executor.now()
    with pytest.raises(InvalidFieldError, match=r"SimulatedExecutor\.max_iterations=0"):
        SimulatedExecutor(lambda config, i: ({}, 0.0), resources=Resources(), max_iterations=0)


def test_it_is_an_executor() -> None:
    executor: Executor = SimulatedExecutor(lambda c, i: ({}, 1.0), resources=Resources(cpu=3))
    assert executor.cluster_resources() == Resources(cpu=3)


# -- whole experiments ---------------------------------------------------------------


def test_fifo_runs_every_trial_to_its_criterion_in_hand_computed_time(tmp_path: Path) -> None:
    def trainable(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
        x = config["x"]
        assert isinstance(x, int)
        return {"loss": x / iteration}, 1.5

    result = run(
        tmp_path,
        trainable,
        {"x": grid_search([1, 2, 3, 4])},
        cpus=2,
        stop={"training_iteration": 10},
        start_time=100.0,
        start_seconds=0.5,
    )
    first, second, third, fourth = result.trial_ids()
    assert all(t.status is TrialStatus.TERMINATED for t in result.final.trials.values())
    # Trials 1 and 2 start at 100.0, are up at 100.5 and report at
    # 100.5 + 1.5 k, the 10th at 115.5, where the criterion stops both. Their
    # workers (1 and 2) go to trials 3 and 4: up at 116.0, done at 131.0.
    for trial_id, begins in ((first, 100.5), (second, 100.5), (third, 116.0), (fourth, 116.0)):
        reports = result.reports(trial_id)
        assert [r.result["training_iteration"] for r in reports] == list(range(1, 11))
        assert [r.at for r in reports] == [begins + 1.5 * k for k in range(1, 11)]
        assert reports[-1].result["time_total_s"] == 15.0
    assert result.executor.now() == 131.0
    workers = [
        (e.trial_id, e.location.pid, e.at) for e in result.events if isinstance(e, TrialStarted)
    ]
    assert workers == [
        (first, 1, 100.5),
        (second, 2, 100.5),
        (third, 1, 116.0),
        (fourth, 2, 116.0),
    ]


def asha_run(root: Path, seed: int) -> Run:
    """16 random trials under ASHA's promotion variant (pauses and resumes),
    checkpointing every 3 iterations, each trial done at iteration 9."""

    def trainable(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
        lr = config["lr"]
        assert isinstance(lr, float)
        return {"loss": (lr - 0.3) ** 2 + 1 / iteration}, 0.5 + lr

    scheduler = ASHAPromotionScheduler(max_t=9, grace_period=1, reduction_factor=3)
    return run(
        root,
        trainable,
        {"lr": uniform(0.0, 1.0)},
        cpus=3,
        scheduler=scheduler,
        samples=16,
        seed=seed,
        checkpoints=CheckpointPolicy(frequency=3, num_to_keep=1),
        max_iterations=9,
        start_seconds=0.25,
        save_seconds=0.125,
    )


def test_the_same_seed_gives_the_same_events_byte_for_byte(tmp_path: Path) -> None:
    # The same directory both times: checkpoint paths are part of the events.
    first = asha_run(tmp_path, seed=7)
    second = asha_run(tmp_path, seed=7)
    assert len(first.events) > 100
    assert [to_msgpack(e) for e in first.events] == [to_msgpack(e) for e in second.events]
    assert first.executor.now() == second.executor.now()
    other = asha_run(tmp_path, seed=8)
    assert [to_msgpack(e) for e in other.events] != [to_msgpack(e) for e in first.events]
    # The events are the whole story: replayed through `step`, none is
    # rejected and they rebuild the loop's final state.
    state = first.initial
    for event in first.events:
        outcome = step(state, event)
        assert not isinstance(outcome, Rejection), outcome
        state = outcome[0]
    assert encode_state(state) == encode_state(first.final)


def test_paused_trials_resume_their_counters_from_memory_checkpoints(tmp_path: Path) -> None:
    result = asha_run(tmp_path, seed=3)
    assert_counters_continue(result)
    resumes = 0
    for trial_id in result.trial_ids():
        starts = [
            e for e in result.events if isinstance(e, TrialStarted) and e.trial_id == trial_id
        ]
        resumes += len(starts) - 1
        since = [r["iterations_since_restore"] for r in result.results(trial_id)]
        assert since.count(1) == len(starts)  # the count restarts at each resume
    assert resumes > 0
    assert any(isinstance(e, TrialRestored) for e in result.events)
    assert files_under(tmp_path) == {"params.json", TOKEN_FILE}  # checkpoint dirs stay empty


def test_pbt_exploits_continue_from_the_donors_checkpoint(tmp_path: Path) -> None:
    """The good configs are the fast ones, so a lagging trial that exploits
    one rewinds to the donor's older checkpoint: its counters must jump
    there, not go on from its own."""

    def trainable(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
        lr = config["lr"]
        assert isinstance(lr, float)
        return {"loss": (lr - 0.3) ** 2 + 1 / iteration}, 4.0 - 3 * lr

    lrs: list[JsonValue] = [0.05, 0.3, 0.6, 0.9]
    scheduler = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=3,
        hyperparam_mutations={"lr": lrs},
        seed=1,
    )
    result = run(
        tmp_path,
        trainable,
        {"lr": grid_search(lrs)},
        cpus=4,
        scheduler=scheduler,
        stop={"training_iteration": 15},
        save_seconds=0.5,
    )
    assert_counters_continue(result)
    own: dict[str, int] = {}
    jumps = 0
    for record in result.log:
        if isinstance(record, ResultReported):
            iteration = record.result["training_iteration"]
            assert isinstance(iteration, int)
            own[record.trial_id] = iteration
        elif isinstance(record, Reset):
            jumps += record.restore.training_iteration != own[record.trial_id]
    assert jumps > 0
    for trial_id in result.trial_ids():
        assert result.results(trial_id)[-1]["training_iteration"] == 15
    # Nothing but what a run writes besides checkpoints: PBT's policy files
    # (log_config, on by default as in Ray) for the trials that exploited.
    written = files_under(tmp_path)
    policies = {name for name in written if name.startswith("pbt_policy_")}
    assert policies
    assert written == {"params.json", TOKEN_FILE, "pbt_global.txt", *policies}


# -- ASHA's rules, checked from the events ---------------------------------------------

# max_t=8, grace 1, rf 2: int(log(8)/log(2) + 1) = 4 rungs at 1, 2, 4, 8.
# Reaching max_t stops a trial before any verdict, so 1, 2 and 4 decide.
RF = 2
MAX_T = 8
MILESTONES = (1, 2, 4)

curves = st.lists(
    st.tuples(
        st.integers(0, 4).map(float),  # a: the loss it converges to
        st.integers(0, 4).map(float),  # b: how far it starts above it
        st.sampled_from([0.5, 1.0, 1.5, 2.0]),  # seconds per iteration
    ),
    min_size=2,
    max_size=10,
)


def asha_population(
    root: Path, population: Sequence[tuple[float, float, float]], cpus: int, variant: Variant
) -> Run:
    """Trial k follows loss = a_k + b_k / iteration."""

    def trainable(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
        k = config["k"]
        assert isinstance(k, int)
        a, b, seconds = population[k]
        return {"loss": a + b / iteration}, seconds

    kind = ASHAScheduler if variant == "stopping" else ASHAPromotionScheduler
    scheduler = kind(max_t=MAX_T, grace_period=1, reduction_factor=RF)
    result = run(
        root,
        trainable,
        {"k": grid_search(list(range(len(population))))},
        cpus=cpus,
        scheduler=scheduler,
        start_seconds=0.25,
    )
    assert all(t.status is TrialStatus.TERMINATED for t in result.final.trials.values())
    assert_counters_continue(result)
    return result


def reported(run: Run) -> Iterable[tuple[int, str, int, float]]:
    """(position, trial, iteration, score) of every result in order; the
    score is signed (greater is better), so mode=min negates the loss."""
    for position, event in enumerate(run.events):
        if isinstance(event, ResultReported):
            iteration, loss = event.result["training_iteration"], event.result["loss"]
            assert isinstance(iteration, int)
            assert isinstance(loss, float)
            yield position, event.trial_id, iteration, -loss


@settings(max_examples=30, deadline=None)
@given(population=curves, cpus=st.integers(1, 3))
def test_promotion_moves_a_trial_past_a_rung_only_from_its_top_k(
    tmp_path_factory: pytest.TempPathFactory,
    population: list[tuple[float, float, float]],
    cpus: int,
) -> None:
    """The paper's rule: a trial paused at rung m is promoted, when its next
    result arrives, exactly when fewer than floor(|rung| / rf) of the scores
    the rung recorded so far rank above its own (ties: the earlier record
    ranks higher). Promoted means it reports again after that result: every
    trial ends TERMINATED, so one paused at the next rung was resumed."""
    result = asha_population(tmp_path_factory.mktemp("promotion"), population, cpus, "promotion")
    last = result.last_iterations()
    rungs: dict[int, list[tuple[float, int, str]]] = {m: [] for m in MILESTONES}
    decisions = 0
    for position, trial_id, iteration, score in reported(result):
        promoted = True
        if iteration - 1 in MILESTONES:  # resumed from that rung: the verdict is now
            rung = rungs[iteration - 1]
            (own,) = [(s, p) for s, p, t in rung if t == trial_id]
            above = sum(1 for s, p, _ in rung if s > own[0] or (s == own[0] and p < own[1]))
            in_top = above < math.floor(len(rung) / RF)
            promoted = last[trial_id] > iteration
            assert promoted == in_top, (trial_id, iteration, rung)
            decisions += 1
        if iteration in MILESTONES and promoted:
            rungs[iteration].append((score, position, trial_id))
    assert decisions > 0


@settings(max_examples=30, deadline=None)
@given(population=curves, cpus=st.integers(1, 3))
def test_stopping_lets_a_trial_past_a_rung_only_at_or_above_rays_cutoff(
    tmp_path_factory: pytest.TempPathFactory,
    population: list[tuple[float, float, float]],
    cpus: int,
) -> None:
    """Ray's rule: a trial reaching rung m goes on exactly when the rung
    recorded nothing before it, or its score is at least the
    (1 - 1/rf) * 100th percentile (numpy's, as Ray computes it) of the scores
    recorded there before it; either way its score is then recorded."""
    result = asha_population(tmp_path_factory.mktemp("stopping"), population, cpus, "stopping")
    last = result.last_iterations()
    rungs: dict[int, list[float]] = {m: [] for m in MILESTONES}
    for _, trial_id, iteration, score in reported(result):
        if iteration not in MILESTONES:
            continue
        rung = rungs[iteration]
        goes_on = not rung or bool(score >= numpy.percentile(rung, (1 - 1 / RF) * 100))
        assert (last[trial_id] > iteration) == goes_on, (trial_id, iteration, rung, score)
        rung.append(score)
    assert all(last[t] in (*MILESTONES, MAX_T) for t in last)
