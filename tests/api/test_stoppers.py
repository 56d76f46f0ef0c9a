"""Stopping trials and experiments through `RunConfig(stop=...)`, end to end
on the in-process executor, as a Ray Tune user writes it."""

from __future__ import annotations

import datetime
import tempfile
import warnings
from collections import Counter
from pathlib import Path

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tunecore
from tests.api.test_replay import assert_replay_matches, curve, recording
from tests.api.test_restore import Crash, CrashAfter, checkpointed_step, report_step
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.api.results import ResultGrid
from tunecore.core import current_checkpoint
from tunecore.model import JsonDict, Resources, ResultReported
from tunecore.shell.callbacks import Callback
from tunecore.shell.eventlog import read_log
from tunecore.stopper import (
    CombinedStopper,
    ExperimentPlateauStopper,
    FunctionStopper,
    MaximumIterationStopper,
    NoopStopper,
    Stopper,
    TimeoutStopper,
    TrialPlateauStopper,
)


def _fit(trainable: object, tmp_path: Path, stop: object, **tune: object) -> ResultGrid:
    run = RunConfig(
        name="stoppers",
        storage_path=str(tmp_path),
        verbose=0,
        executor="in_process",
        stop=stop,
    )
    return Tuner(
        trainable,  # type: ignore[arg-type]
        param_space={"x": tunecore.grid_search([1, 2])},
        tune_config=TuneConfig(**tune),  # type: ignore[arg-type]
        run_config=run,
    ).fit()


def reports_done_at_three(config: dict[str, object]) -> None:
    for i in range(10):
        tunecore.report({"loss": float(i), "finished": i == 2})


def test_a_boolean_criterion_stops_when_the_flag_is_reached(tmp_path: Path) -> None:
    grid = _fit(reports_done_at_three, tmp_path, {"finished": True})
    assert not grid.errors
    assert [r.metrics["training_iteration"] for r in grid] == [3, 3]


def test_stop_on_done_lets_trials_run_to_their_end(tmp_path: Path) -> None:
    grid = _fit(reports_done_at_three, tmp_path, {"done": True})
    assert not grid.errors
    assert [r.metrics["training_iteration"] for r in grid] == [10, 10]


def climbs_forever(config: dict[str, object]) -> None:
    i = 1
    while True:
        tunecore.report({"mean_accuracy": min(i / 10, 1.0), "flat": 1.0})
        i += 1


def iterations(grid: ResultGrid) -> list[int]:
    return [int(str(r.metrics.get("training_iteration", 0))) for r in grid]


def test_the_stopper_module_is_reachable_from_the_package() -> None:
    import tunecore as tune  # noqa: PLC0415 - the user's spelling is the point

    assert tune.stopper.MaximumIterationStopper(3).max_iter == 3
    assert isinstance(tune.stopper.MaximumIterationStopper(3), tune.Stopper)
    assert tune.stopper.Stopper is tune.Stopper


def test_a_built_in_stopper_stops_each_trial(tmp_path: Path) -> None:
    grid = _fit(climbs_forever, tmp_path, MaximumIterationStopper(max_iter=4))
    assert not grid.errors
    assert iterations(grid) == [4, 4]
    assert all(r.metrics["done"] for r in grid)


def test_a_combined_stopper_stops_on_the_first_that_says_so(tmp_path: Path) -> None:
    stop = CombinedStopper(MaximumIterationStopper(10), TrialPlateauStopper(metric="flat"))
    grid = _fit(climbs_forever, tmp_path, stop)
    assert iterations(grid) == [4, 4]  # a flat metric plateaus after the grace period


def test_a_function_stops_trials(tmp_path: Path) -> None:
    seen: list[str] = []

    def stop_fn(trial_id: str, result: dict[str, object]) -> bool:
        seen.append(trial_id)
        return float(str(result["mean_accuracy"])) >= 0.8

    grid = _fit(climbs_forever, tmp_path, stop_fn)
    assert not grid.errors
    assert iterations(grid) == [8, 8]
    assert len(seen) == 16  # once per result, never for a result past the stop


class StopsEverythingAt(Stopper):
    """Ray's documented custom stopper: once one trial reaches the accuracy,
    every trial stops."""

    def __init__(self, accuracy: float) -> None:
        self.accuracy = accuracy
        self.should_stop = False

    def __call__(self, trial_id: str, result: dict[str, object]) -> bool:
        if float(str(result["mean_accuracy"])) >= self.accuracy:
            self.should_stop = True
        return self.should_stop

    def stop_all(self) -> bool:
        return self.should_stop


def test_a_stopper_of_ones_own_stops_the_experiment(tmp_path: Path) -> None:
    grid = _fit(climbs_forever, tmp_path, StopsEverythingAt(0.3), max_concurrent_trials=1)
    assert not grid.errors
    # The first trial stops at its third result and the experiment with it:
    # the second trial never starts, or is stopped before it reports.
    assert iterations(grid) == [3, 0]


def test_a_built_in_and_an_own_stopper_combine(tmp_path: Path) -> None:
    stop = [MaximumIterationStopper(5), StopsEverythingAt(0.3)]
    grid = _fit(climbs_forever, tmp_path, stop, max_concurrent_trials=1)
    assert iterations(grid) == [3, 0]


def test_a_stopper_built_on_ray_tunes_own_class_runs_as_ones_own(tmp_path: Path) -> None:
    """A package built on Ray Tune (rt-stoppers-contrib) subclasses Ray's
    `ray.tune.Stopper`, and its imports are not the user's to rewrite: such
    a stopper runs as the user's own, alone or in a `CombinedStopper`
    beside a built-in one, its `stop_all` asked too."""
    pytest.importorskip("fsspec")  # ray.tune needs it; ray[tune], which tunecore depends on, has it
    ray_stopper = pytest.importorskip("ray.tune.stopper")

    class FromAPackage(ray_stopper.Stopper):  # type: ignore[misc,name-defined]
        def __init__(self, accuracy: float) -> None:
            self.accuracy = accuracy
            self.reached = False

        def __call__(self, trial_id: str, result: dict[str, object]) -> bool:
            self.reached = self.reached or float(str(result["mean_accuracy"])) >= self.accuracy
            return self.reached

        def stop_all(self) -> bool:
            return self.reached

    alone = _fit(climbs_forever, tmp_path / "alone", FromAPackage(0.3), max_concurrent_trials=1)
    assert iterations(alone) == [3, 0]
    stop = CombinedStopper(MaximumIterationStopper(2), FromAPackage(0.3))
    combined = _fit(climbs_forever, tmp_path / "combined", stop)
    assert not combined.errors
    assert iterations(combined) == [2, 2]


def test_a_timeout_stops_the_experiment(tmp_path: Path) -> None:
    grid = _fit(climbs_forever, tmp_path, TimeoutStopper(datetime.timedelta(seconds=0.2)))
    assert not grid.errors
    assert all(n >= 1 for n in iterations(grid))


def test_an_object_with_stop_all_that_is_no_stopper_is_refused() -> None:
    class Lookalike:
        def __call__(self, trial_id: str, result: dict[str, object]) -> bool:
            return False

        def stop_all(self) -> bool:
            return False

    with pytest.raises(pydantic.ValidationError, match="subclass Stopper"):
        RunConfig(stop=Lookalike())


def test_a_subclass_of_a_built_in_stopper_is_refused() -> None:
    class MyMaximum(MaximumIterationStopper, frozen=True):
        pass

    with pytest.raises(pydantic.ValidationError, match=r"subclass tunecore.stopper.Stopper"):
        RunConfig(stop=MyMaximum(3))


@pytest.mark.parametrize("stop", [3, "loss", {"loss": "low"}], ids=repr)
def test_a_stop_of_no_known_kind_is_refused_naming_it(stop: object) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        RunConfig(stop=stop)
    assert "stop" in str(caught.value)


# -- through tunecore.simulate, and replay -------------------------------------


def loss_curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    """A loss that falls to a floor set by `x`, then stays there."""
    x = float(str(config["x"]))
    return {"loss": max(x, 10.0 - iteration)}, 1.0


def simulated(root: Path, stop: object, **tune: object) -> ResultGrid:
    return tunecore.simulate(
        loss_curve,
        param_space={"x": tunecore.grid_search([1.0, 5.0, 8.0])},
        tune_config=TuneConfig(seed=1, **tune),  # type: ignore[arg-type]
        run_config=RunConfig(name="sim", storage_path=str(root), verbose=0, stop=stop),
        max_iterations=30,
    )


@settings(max_examples=15, deadline=None)
@given(max_iter=st.integers(1, 40))
def test_simulated_trials_stop_at_the_maximum_iteration(max_iter: int) -> None:
    with tempfile.TemporaryDirectory() as root:
        grid = simulated(Path(root), MaximumIterationStopper(max_iter))
        assert iterations(grid) == [min(max_iter, 30)] * 3
        replayed = tunecore.replay(Path(root) / "sim")
        assert replayed.snapshots_verified >= 1
        stopper = replayed.state.stopper
        assert isinstance(stopper, MaximumIterationStopper)
        assert dict(stopper.seen.items()) == {t: min(max_iter, 30) for t in replayed.state.trials}


def test_simulated_trials_stop_where_their_loss_plateaus(tmp_path: Path) -> None:
    stop = TrialPlateauStopper("loss", num_results=3, grace_period=3)
    grid = simulated(tmp_path, stop)
    # The loss is flat from iteration 10 - x on; three equal values later it stops.
    assert iterations(grid) == [11, 7, 4]


def test_a_simulated_experiment_stops_when_its_best_results_plateau(tmp_path: Path) -> None:
    stop = ExperimentPlateauStopper("loss", top=3, mode="min")
    grid = simulated(tmp_path, stop, max_concurrent_trials=1)
    # Trial x=1 alone: its three lowest losses are 1, 1, 1 at iteration 11;
    # the experiment stops there, and the searcher suggests no more trials.
    assert iterations(grid) == [11]
    assert tunecore.replay(tmp_path / "sim").snapshots_verified >= 1


def test_replay_needs_no_user_stopper_and_gives_the_same_state(tmp_path: Path) -> None:
    calls: Counter[str] = Counter()

    def third_result_ends_a_trial(trial_id: str, result: dict[str, object]) -> bool:
        calls[trial_id] += 1  # stateful, as a user's stopper may be
        return calls[trial_id] >= 3

    grid = _fit(climbs_forever, tmp_path, third_result_ends_a_trial)
    assert iterations(grid) == [3, 3]
    live = {r.metrics["trial_id"]: r.metrics for r in grid}

    replayed = tunecore.replay(tmp_path / "stoppers")  # without the function
    assert replayed.snapshots_verified >= 1  # the live run's final state, byte for byte
    assert {t: s.last_result for t, s in replayed.state.trials.items()} == live
    verdicts = [
        e.stopped_by
        for e in read_log(tmp_path / "stoppers").events
        if isinstance(e, ResultReported) and e.stopped_by is not None
    ]
    assert verdicts == ["FunctionStopper(" + third_result_ends_a_trial.__qualname__ + ")"] * 2


# -- resume --------------------------------------------------------------------


def steps_with_checkpoints(config: dict[str, float]) -> None:
    """Resumes from its checkpoint; the loss depends only on config and step."""
    for step in range(checkpointed_step() + 1, 9):
        report_step({"loss": config["x"] * 10.0 - step}, step)


def loss_below_zero(trial_id: str, result: dict[str, object]) -> bool:
    return float(str(result["loss"])) < 0.0


def stoppers_experiment(root: Path, callbacks: list[Callback]) -> Tuner:
    return Tuner(
        steps_with_checkpoints,
        param_space={"x": tunecore.grid_search([0.2, 0.9, 0.45])},
        tune_config=TuneConfig(max_concurrent_trials=1),  # one order of events
        run_config=RunConfig(
            name="exp",
            storage_path=str(root),
            verbose=0,
            executor="in_process",
            callbacks=callbacks,
            stop=[MaximumIterationStopper(6), FunctionStopper(loss_below_zero)],
        ),
    )


def test_a_resumed_experiment_keeps_its_stoppers_state(tmp_path: Path) -> None:
    baseline = stoppers_experiment(tmp_path / "baseline", []).fit()
    assert iterations(baseline) == [3, 6, 5]  # loss < 0, the maximum, loss < 0
    # The crash comes at the second trial's fourth result. Resumed from its
    # checkpoint at step c (3 or 4: the save may not be in yet), it reports
    # the steps after c again; the stopper counts results seen, as Ray's
    # does, so with its count k kept it stops after step 6 - k + c. A
    # stopper that forgot its count would let the trial run to its end (8).
    with pytest.raises(Crash):
        stoppers_experiment(tmp_path / "crashed", [CrashAfter(results=7)]).fit()
    directory = tmp_path / "crashed" / "exp"
    crashed = tunecore.replay(directory).state
    second = sorted(crashed.trials)[1]
    counted = crashed.stopper
    assert isinstance(counted, MaximumIterationStopper)
    k = counted.seen.get(second)
    checkpoint = current_checkpoint(crashed.trials[second])
    assert k == 4
    assert checkpoint is not None

    resumed = Tuner.restore(
        directory, steps_with_checkpoints, stop=FunctionStopper(loss_below_zero)
    ).fit()

    assert iterations(resumed) == [3, 6 - k + checkpoint.training_iteration, 5]
    final = tunecore.replay(directory)
    assert final.snapshots_verified >= 1
    counts = final.state.stopper  # the built-in part; the function ran in the shell
    assert isinstance(counts, MaximumIterationStopper)
    assert counts.seen.get(second) == 6


def test_a_restore_without_ones_own_stopper_says_to_pass_it(tmp_path: Path) -> None:
    with pytest.raises(Crash):
        stoppers_experiment(tmp_path, [CrashAfter(results=7)]).fit()
    with pytest.warns(UserWarning, match=r"FunctionStopper\(loss_below_zero\).*stop=") as caught:
        Tuner.restore(tmp_path / "exp", steps_with_checkpoints)
    assert len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Tuner.restore(
            tmp_path / "exp", steps_with_checkpoints, stop=FunctionStopper(loss_below_zero)
        )


# -- replay of random experiments with random stoppers ----------------------------

BUILT_IN_STOPPERS = st.sampled_from(
    [
        MaximumIterationStopper(4),
        MaximumIterationStopper(9),
        TrialPlateauStopper("loss", std=0.05, num_results=2, grace_period=2),
        TrialPlateauStopper("loss", std=0.3, metric_threshold=1.0, mode="max"),
        ExperimentPlateauStopper("loss", std=0.2, top=3),
        ExperimentPlateauStopper("loss", std=0.5, top=2, mode="max", patience=2),
        TimeoutStopper(6.0),
        NoopStopper(),
    ]
)


@settings(max_examples=20, deadline=None)
@given(
    stoppers=st.lists(BUILT_IN_STOPPERS, min_size=1, max_size=3),
    own=st.booleans(),
    trials=st.integers(1, 8),
    cpus=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_replay_of_a_run_with_stoppers_equals_the_live_run(
    stoppers: list[object], own: bool, trials: int, cpus: int, seed: int
) -> None:
    """Built-in stoppers are in the state, a user's verdicts in the log:
    replay, without the user's stopper, gives the live state byte for byte
    and the live commands one for one."""
    stop: list[object] = list(stoppers)
    if own:
        stop.append(FunctionStopper(lambda trial_id, result: float(str(result["loss"])) < 0.4))
    with tempfile.TemporaryDirectory() as root, recording() as live:
        tunecore.simulate(
            curve,
            param_space={"a": tunecore.uniform(0.0, 1.0), "b": tunecore.uniform(0.0, 3.0)},
            tune_config=TuneConfig(num_samples=trials, seed=seed),
            run_config=RunConfig(name="sim", storage_path=root, verbose=0, stop=stop),
            cluster=Resources(cpu=cpus),
            max_iterations=12,
        )
        assert_replay_matches(Path(root) / "sim", live)


def test_a_timeout_counts_virtual_time_in_a_simulation(tmp_path: Path) -> None:
    """`loss_curve` takes 1 s per iteration: at 5 s of experiment time every
    trial stops, whatever the wall clock did. The first result at 5 s ends
    the experiment; the other trials' results of that same moment come
    after it and are no longer taken."""
    grid = simulated(tmp_path, TimeoutStopper(5.0))
    assert iterations(grid) == [5, 4, 4]
    assert tunecore.replay(tmp_path / "sim").state.stopping == (
        "Reached timeout of 5 seconds (TimeoutStopper)"
    )
