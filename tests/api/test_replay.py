"""Replay rebuilds exactly what the live run computed: the final state as
identical msgpack bytes, and the commands one for one, for random
experiments under the simulated and the in-process executors."""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tunecore
from tunecore import CheckpointConfig, FailureConfig, RunConfig, TuneConfig, Tuner
from tunecore.core.experiment import ExperimentState, SteppedWithChanges, step_with_changes
from tunecore.core.experiment.snapshot import encode_state
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.model import Command, ExperimentEvent, JsonDict, Rejection, Resources
from tunecore.schedulers import (
    PB2,
    ASHAPromotionScheduler,
    ASHAScheduler,
    FIFOScheduler,
    HyperBandScheduler,
    MedianStoppingRule,
    PopulationBasedTraining,
)
from tunecore.shell import loop as loop_module
from tunecore.shell.eventlog import LogError, read_log
from tunecore.shell.journal import SnapshotStore, seal


@dataclass
class Live:
    """What the live loop's `step` computed: every command, numbered by the
    event it answered, and the state after the last accepted event."""

    commands: list[tuple[int, Command]] = field(default_factory=list)
    state: ExperimentState | None = None


@contextlib.contextmanager
def recording() -> Iterator[Live]:
    """Record what the live loop's steps return (`step_with_changes`, see
    `Live`)."""
    live = Live()
    count = 0

    def recording_step(
        state: ExperimentState, event: ExperimentEvent
    ) -> SteppedWithChanges | Rejection:
        nonlocal count
        count += 1
        outcome = step_with_changes(state, event)
        if not isinstance(outcome, Rejection):
            live.state = outcome[0]
            live.commands.extend((count, command) for command in outcome[1])
        return outcome

    with mock.patch.object(loop_module, "step_with_changes", recording_step):
        yield live


def scheduler_for(name: str, seed: int) -> TrialScheduler:
    if name == "asha":
        return ASHAScheduler(max_t=12, grace_period=2, reduction_factor=3)
    if name == "asha_promotion":
        return ASHAPromotionScheduler(max_t=12, grace_period=2, reduction_factor=3)
    if name == "hyperband":
        return HyperBandScheduler(max_t=12, reduction_factor=3)
    if name == "median":
        return MedianStoppingRule(grace_period=2, min_samples_required=2)
    if name == "pb2":
        return PB2(perturbation_interval=3, hyperparam_bounds={"a": [0.0, 1.0]}, seed=seed)
    if name == "pbt":
        return PopulationBasedTraining(
            perturbation_interval=3,
            hyperparam_mutations={"a": tunecore.uniform(0.0, 1.0)},
            seed=seed,
        )
    return FIFOScheduler()


SCHEDULERS = st.sampled_from(
    ["fifo", "asha", "asha_promotion", "hyperband", "median", "pbt", "pb2"]
)


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    a, b = config["a"], config["b"]
    assert isinstance(a, float)
    assert isinstance(b, float)
    return {"loss": a + b / iteration}, 0.5 + a


def assert_replay_matches(directory: Path, live: Live) -> None:
    """The log replays to the live run's final state, byte for byte, and to
    its commands, one for one."""
    replayed = tunecore.replay(directory)
    assert live.state is not None
    assert live.state.done
    assert encode_state(replayed.state) == encode_state(live.state)
    assert replayed.commands == live.commands


def simulate_curves(
    root: str | Path,
    *,
    trials: int,
    seed: int,
    scheduler: str,
    cpus: int,
    checkpoint_frequency: int = 0,
) -> Path:
    """A simulated experiment of `curve`; its directory."""
    results = tunecore.simulate(
        curve,
        param_space={"a": tunecore.uniform(0.0, 1.0), "b": tunecore.uniform(0.0, 3.0)},
        tune_config=TuneConfig(
            metric="loss",
            mode="min",
            num_samples=trials,
            seed=seed,
            scheduler=scheduler_for(scheduler, seed),
        ),
        run_config=RunConfig(
            name="sim",
            storage_path=str(root),
            verbose=0,
            checkpoint_config=CheckpointConfig(checkpoint_frequency=checkpoint_frequency),
        ),
        cluster=Resources(cpu=cpus),
        max_iterations=12,
    )
    return Path(results.experiment_path)


@settings(max_examples=15, deadline=None)
@given(
    scheduler=SCHEDULERS,
    trials=st.integers(1, 12),
    cpus=st.integers(1, 4),
    seed=st.integers(0, 2**16),
    checkpoint_frequency=st.integers(0, 3),
)
def test_replay_of_a_simulated_run_equals_the_live_run(
    scheduler: str,
    trials: int,
    cpus: int,
    seed: int,
    checkpoint_frequency: int,
) -> None:
    with tempfile.TemporaryDirectory() as root, recording() as live:
        directory = simulate_curves(
            root,
            trials=trials,
            seed=seed,
            scheduler=scheduler,
            cpus=cpus,
            checkpoint_frequency=checkpoint_frequency,
        )
        assert_replay_matches(directory, live)


def test_replay_of_a_pb2_run_equals_the_live_run_exploits_included(tmp_path: Path) -> None:
    """PB2's model runs again on replay, from the state the log holds."""
    pb2 = PB2(
        time_attr="training_iteration",
        perturbation_interval=2,
        hyperparam_bounds={"a": [0.0, 1.0]},
        quantile_fraction=0.5,
        seed=3,
    )
    with recording() as live:
        results = tunecore.simulate(
            curve,
            param_space={"a": tunecore.uniform(0.0, 1.0), "b": tunecore.uniform(0.0, 3.0)},
            tune_config=TuneConfig(metric="loss", mode="min", num_samples=6, seed=3, scheduler=pb2),
            run_config=RunConfig(
                name="sim",
                storage_path=str(tmp_path),
                verbose=0,
                checkpoint_config=CheckpointConfig(checkpoint_frequency=1),
            ),
            cluster=Resources(cpu=2),
            max_iterations=20,
        )
        assert_replay_matches(Path(results.experiment_path), live)
    assert live.state is not None
    scheduler = live.state.scheduler
    assert isinstance(scheduler, PB2)
    assert scheduler.num_perturbations >= 3
    assert scheduler.round_time > 0  # set only when the model chose the values


def test_the_same_seed_writes_the_same_log_bytes(tmp_path: Path) -> None:
    def digest(root: Path, seed: int) -> str:
        directory = simulate_curves(root, trials=20, seed=seed, scheduler="asha", cpus=3)
        return hashlib.sha256((directory / "events.log").read_bytes()).hexdigest()

    first = digest(tmp_path / "one", 5)
    assert digest(tmp_path / "two", 5) == first
    assert digest(tmp_path / "three", 6) != first


def flaky(config: dict[str, float]) -> None:
    """Reports a few results, and fails once half-way for some configs."""
    for step_ in range(1, 7):
        if step_ == 4 and config["a"] < 0.3 and tunecore.get_checkpoint() is None:
            raise RuntimeError("a failure the trial recovers from")
        tunecore.report({"loss": config["a"] + 1.0 / step_})


@settings(max_examples=6, deadline=None)
@given(scheduler=SCHEDULERS, trials=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_replay_of_an_in_process_run_equals_the_live_run(
    scheduler: str, trials: int, seed: int
) -> None:
    """Threads decide the order results arrive in; the log records that
    order, so replay still gives the live state and commands exactly."""
    with tempfile.TemporaryDirectory() as root, recording() as live:
        results = Tuner(
            flaky,
            param_space={"a": tunecore.uniform(0.0, 1.0)},
            tune_config=TuneConfig(
                metric="loss",
                mode="min",
                num_samples=trials,
                seed=seed,
                scheduler=scheduler_for(scheduler, seed),
            ),
            run_config=RunConfig(
                name="live",
                storage_path=root,
                verbose=0,
                executor="in_process",
                failure_config=FailureConfig(max_failures=1),
            ),
        ).fit()
        assert_replay_matches(Path(results.experiment_path), live)


def test_a_simulated_experiment_cannot_be_resumed_as_a_real_one(tmp_path: Path) -> None:
    results = tunecore.simulate(
        curve,
        param_space={"a": 0.5, "b": 1.0},
        run_config=RunConfig(name="sim", storage_path=str(tmp_path), verbose=0),
        max_iterations=3,
    )
    with pytest.raises(LogError, match="simulated experiment"):
        Tuner.restore(results.experiment_path)


def fails_at_3_when_a_is_small(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    a = config["a"]
    assert isinstance(a, float)
    if iteration == 3 and a < 0.5:
        raise ValueError(f"a={a} is too small at iteration 3")
    return {"loss": a + 1.0 / iteration}, 1.0


def test_a_simulated_trainable_that_raises_fails_its_trial_only(tmp_path: Path) -> None:
    results = tunecore.simulate(
        fails_at_3_when_a_is_small,
        param_space={"a": tunecore.grid_search([0.25, 0.75])},
        tune_config=TuneConfig(metric="loss", mode="min"),
        run_config=RunConfig(
            name="sim",
            storage_path=str(tmp_path),
            verbose=0,
            failure_config=FailureConfig(max_failures=1),
        ),
        max_iterations=5,
    )
    by_a = {r.config["a"]: r for r in results}
    failed, fine = by_a[0.25], by_a[0.75]
    assert failed.status.value == "ERROR"
    assert failed.error is not None
    assert "a=0.25 is too small at iteration 3" in str(failed.error)
    assert fine.status.value == "TERMINATED"
    assert fine.metrics["training_iteration"] == 5
    events = tunecore.replay(results.experiment_path).state.trials
    assert events[failed.trial_id].num_failures == 2  # retried once, then ERROR


def test_a_snapshot_an_older_tunecore_wrote_of_the_median_rule_still_verifies(
    tmp_path: Path,
) -> None:
    """The median rule's state was plain dicts (`results`, `last_pause`)
    before it became persistent maps: a snapshot holding the old form is the
    same state, so replay verifies it instead of calling the log a liar."""
    directory = simulate_curves(tmp_path, trials=6, seed=3, scheduler="median", cpus=2)
    store = SnapshotStore(directory)
    records = store.available()[-1]
    snapshot = store.load(records)
    assert snapshot is not None
    stored = msgspec.msgpack.decode(snapshot.state)
    rule = stored["scheduler"]
    samples, pauses = rule.pop("samples"), rule.pop("pauses")
    rule["results"] = {k: v for shard in samples[0] for k, v in shard.items()}
    rule["last_pause"] = {k: v for shard in pauses[0] for k, v in shard.items()} if pauses else {}
    assert rule["results"]  # the rule had recorded results
    old = msgspec.msgpack.encode(stored)
    assert old != snapshot.state
    contents = read_log(directory)
    sealed = seal(contents.prefix_hash(snapshot.log_bytes), old)
    store.write(records, snapshot.digest, old, log_bytes=snapshot.log_bytes, sealed=sealed)
    assert tunecore.replay(directory).snapshots_verified >= 1
