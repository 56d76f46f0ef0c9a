"""The results API as Ray Tune 2.x spells it: `Result.metrics_dataframe`,
`Result.best_checkpoints`, `ResultGrid.get_dataframe(filter_metric=,
filter_mode=)`, the `last-5-avg`/`last-10-avg` scopes, `Tuner.get_results`,
`Tuner.can_restore`, and reading an experiment from its directory
(`ResultGrid.from_path`, `ExperimentAnalysis`) without the user's code."""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, cast

import cloudpickle
import pytest

import tunecore
from tunecore import (
    CheckpointConfig,
    ExperimentAnalysis,
    Result,
    ResultGrid,
    RunConfig,
    TuneConfig,
    Tuner,
)
from tunecore.model import TrialStatus
from tunecore.schedulers import ASHAScheduler
from tunecore.shell.callbacks import Callback

# Per trial `x`, the losses it reports, in order. x=0 is best on its last
# value, x=1 on its last 5, x=2 on its last 10, x=3 on its best ever.
LOSSES = {
    0: [9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 0.0],
    1: [9.0, 9.0, 9.0, 9.0, 9.0, 1.0, 1.0, 1.0, 1.0, 1.5],
    2: [1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5],
    3: [-1.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0],
}


def losses(config: dict[str, int]) -> None:
    for step, loss in enumerate(LOSSES[config["x"]], start=1):
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "step").write_text(str(step))
            tunecore.report(
                {"loss": loss, "nested": {"loss": loss}},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def run(tmp_path: Path, *, name: str = "exp", **run_config: object) -> Tuner:
    return Tuner(
        losses,
        param_space={"x": tunecore.grid_search(list(LOSSES))},
        tune_config=TuneConfig(metric="loss", mode="min"),
        run_config=RunConfig(
            name=name,
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            checkpoint_config=CheckpointConfig(
                num_to_keep=2, checkpoint_score_attribute="loss", checkpoint_score_order="min"
            ),
            **run_config,  # type: ignore[arg-type]
        ),
    )


@pytest.fixture(scope="module")
def experiment(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tuner, ResultGrid]:
    tuner = run(tmp_path_factory.mktemp("results"))
    return tuner, tuner.fit()


def best_x(results: ResultGrid, **kwargs: object) -> object:
    return results.get_best_result(**kwargs).config["x"]  # type: ignore[arg-type]


def test_each_scope_picks_the_trial_best_by_it(experiment: tuple[Tuner, ResultGrid]) -> None:
    _, results = experiment
    assert best_x(results) == 0
    assert best_x(results, scope="last-5-avg") == 1  # (1+1+1+1+1.5)/5 = 1.1 < 1.5
    assert best_x(results, scope="last-10-avg") == 2  # 1.5 < 5.05 (x=1)
    assert best_x(results, scope="all") == 3
    assert best_x(results, metric="nested/loss", scope="last-5-avg") == 1
    assert best_x(results, mode="max", scope="last-10-avg") == 0  # 8.1 > 8.0 (x=3)


def test_an_unknown_scope_names_the_accepted_ones(experiment: tuple[Tuner, ResultGrid]) -> None:
    _, results = experiment
    with pytest.raises(ValueError, match="last-10-avg"):
        results.get_best_result(scope="last-3-avg")  # type: ignore[arg-type]


def test_metrics_dataframe_holds_every_result_of_the_trial(
    experiment: tuple[Tuner, ResultGrid],
) -> None:
    _, results = experiment
    for result in results:
        frame = result.metrics_dataframe
        assert frame is not None
        assert list(frame["loss"]) == LOSSES[result.config["x"]]
        assert list(frame["training_iteration"]) == list(range(1, 11))
        assert list(frame["nested/loss"]) == list(frame["loss"])
        assert result.log_dir == Path(result.path)
        assert result.path.startswith(str(results.experiment_path))  # a str, as Ray's
        assert (result.path / "result.json").is_file()
        assert result.path.is_dir()


def test_a_trial_that_never_reported_has_an_empty_metrics_dataframe(tmp_path: Path) -> None:
    def fails_at_once(config: dict[str, object]) -> None:
        raise ValueError("before any report")

    [result] = Tuner(
        fails_at_once,
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    ).fit()
    assert result.error is not None
    frame = result.metrics_dataframe
    assert frame is not None  # as Ray's: empty, not None
    assert frame.empty


def test_best_checkpoints_are_the_kept_ones_with_their_metrics(
    experiment: tuple[Tuner, ResultGrid],
) -> None:
    _, results = experiment
    result = results[1]  # x=1: two of the best (1.0; ties go to the newer, as in Ray)
    kept = [(Path(c.path, "step").read_text(), m["loss"]) for c, m in result.best_checkpoints]
    # Ray Tune 2.60 answers [('8', 1.0), ('9', 1.0)] here: the best `num_to_keep`,
    # worst first. The newest (step 10, loss 1.5), kept on disk besides them
    # as the restore point, is `Result.checkpoint`, not one of the best.
    assert kept == [("8", 1.0), ("9", 1.0)]
    assert result.checkpoint is not None
    assert Path(result.checkpoint.path, "step").read_text() == "10"
    best = result.get_best_checkpoint("loss", "min")
    assert best is not None
    assert Path(best.path, "step").read_text() == "8"  # the first of the ties


def test_get_dataframe_filtered_gives_each_trial_its_best_result(
    experiment: tuple[Tuner, ResultGrid],
) -> None:
    _, results = experiment
    last = results.get_dataframe().set_index("config/x")
    assert dict(last["loss"]) == {x: values[-1] for x, values in LOSSES.items()}
    best = results.get_dataframe(filter_metric="loss", filter_mode="min").set_index("config/x")
    assert dict(best["loss"]) == {x: min(values) for x, values in LOSSES.items()}
    assert dict(best["training_iteration"]) == {
        x: values.index(min(values)) + 1 for x, values in LOSSES.items()
    }
    # Ray 2.60's "logdir" column holds the trial id (measured on Ray).
    assert set(best["logdir"]) == {r.trial_id for r in results}
    highest = results.get_dataframe(filter_metric="nested/loss", filter_mode="max")
    assert list(highest["nested/loss"]) == [max(v) for v in LOSSES.values()]
    with pytest.raises(ValueError, match="filter_metric"):
        results.get_dataframe(filter_mode="min")


def checkpoints_at(config: dict[str, str]) -> None:
    """Reports score = step for steps 1-3, with a checkpoint (holding its
    step) at the steps `config["at"]` names ("13": at 1 and 3)."""
    for step in range(1, 4):
        checkpoint = None
        if str(step) in config["at"]:
            directory = tempfile.mkdtemp()
            Path(directory, "step").write_text(str(step))
            checkpoint = tunecore.Checkpoint.from_directory(directory)
        tunecore.report({"score": step}, checkpoint=checkpoint)


def test_every_dataframe_has_ray_s_checkpoint_dir_name_column(tmp_path: Path) -> None:
    """As in Ray 2.60 (whose every result carries the key): the name of the
    checkpoint directory reported with the row's result, None without
    one, in the last results' frame, the filtered one, and one read from
    the directory alone."""
    results = Tuner(
        checkpoints_at,
        param_space={"at": tunecore.grid_search(["13", "2"])},
        run_config=RunConfig(
            storage_path=str(tmp_path), name="exp", verbose=0, executor="in_process"
        ),
    ).fit()
    path = {str(r.config["at"]): Path(r.path) for r in results}

    def steps(frame: object) -> dict[str, int | None]:
        """The step held by each row's checkpoint, None for a row without one."""
        rows = cast(Any, frame).set_index("config/at")
        return {
            at: int((path[at] / name / "step").read_text()) if isinstance(name, str) else None
            for at, name in rows["checkpoint_dir_name"].items()
        }

    assert steps(results.get_dataframe()) == {"13": 3, "2": None}
    best = results.get_dataframe(filter_metric="score", filter_mode="min")
    assert steps(best) == {"13": 1, "2": None}
    read = ExperimentAnalysis(str(tmp_path / "exp")).dataframe()
    assert steps(read) == {"13": 3, "2": None}


def test_nan_scores_are_passed_over_unless_asked_for(tmp_path: Path) -> None:
    def reports(config: dict[str, float]) -> None:
        tunecore.report({"score": config["score"]})

    results = Tuner(
        reports,
        param_space={"score": tunecore.grid_search([math.nan, 1.0, math.inf])},
        tune_config=TuneConfig(metric="score", mode="max"),
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    ).fit()
    assert results.get_best_result().config["score"] == 1.0
    # Unfiltered, Ray's comparison keeps a NaN that comes first.
    assert math.isnan(results.get_best_result(filter_nan_and_inf=False).config["score"])


def test_a_window_holding_a_nan_passes_the_trial_over_as_avg_does(tmp_path: Path) -> None:
    """result.json keeps a NaN as null; the window scopes read it as NaN,
    so a trial that diverged is not ranked on its earlier values."""

    def reports(config: dict[str, list[float]]) -> None:
        for score in config["scores"]:
            tunecore.report({"score": score})

    results = Tuner(
        reports,
        param_space={"scores": tunecore.grid_search([[1.0, 2.0, 3.0], [100.0, 200.0, math.nan]])},
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    ).fit()
    for scope in ("avg", "last-5-avg", "last-10-avg"):
        best = results.get_best_result("score", "max", scope=scope)
        assert best.config["scores"] == [1.0, 2.0, 3.0], scope


def test_get_results_returns_what_fit_returned(experiment: tuple[Tuner, ResultGrid]) -> None:
    tuner, results = experiment
    assert tuner.get_results() is results


def test_get_results_before_fit_says_to_fit_first(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="fit"):
        run(tmp_path).get_results()


def test_can_restore_tells_an_experiment_from_anything_else(
    experiment: tuple[Tuner, ResultGrid], tmp_path: Path
) -> None:
    _, results = experiment
    assert Tuner.can_restore(results.experiment_path)
    assert not Tuner.can_restore(tmp_path)
    assert not Tuner.can_restore(results[0].path)
    simulated = tunecore.simulate(
        lambda config, iteration: ({"loss": 1.0}, 1.0),
        run_config=RunConfig(name="sim", storage_path=str(tmp_path), verbose=0),
        max_iterations=1,
    )
    assert not Tuner.can_restore(simulated.experiment_path)


def test_a_restored_tuner_has_the_results_before_it_runs(
    experiment: tuple[Tuner, ResultGrid],
) -> None:
    _, results = experiment
    restored = Tuner.restore(results.experiment_path, trainable=losses).get_results()
    assert [r.metrics["loss"] for r in restored] == [r.metrics["loss"] for r in results]
    assert best_x(restored, scope="last-5-avg") == 1


def test_the_loader_reads_what_fit_returned_without_the_trainable(
    experiment: tuple[Tuner, ResultGrid],
) -> None:
    _, results = experiment
    loaded = ResultGrid.from_path(results.experiment_path)
    assert [(r.trial_id, r.config, r.metrics, r.status) for r in loaded] == [
        (r.trial_id, r.config, r.metrics, r.status) for r in results
    ]
    assert [r.path for r in loaded] == [r.path for r in results]
    assert [r.checkpoint.path for r in loaded if r.checkpoint] == [
        r.checkpoint.path for r in results if r.checkpoint
    ]
    assert best_x(loaded) == 0  # the experiment's metric and mode are the defaults
    assert best_x(loaded, scope="last-10-avg") == 2


def test_a_result_compares_as_the_dataclass_it_was_and_keeps_no_dict_of_its_own(
    experiment: tuple[Tuner, ResultGrid],
) -> None:
    _, results = experiment
    loaded = ResultGrid.from_path(results.experiment_path)
    first = results[0]
    assert not hasattr(first, "__dict__")  # a grid holds one per trial: slots only
    assert list(loaded) == list(results)  # compared on what it tells, not its state object
    assert first != results[1]
    assert first.metrics == first.state.last_result
    assert first.config == first.state.spec.config == {"x": 0}
    assert first.config is not first.config  # kept packed: a dict of the caller's own
    assert first.best_checkpoints == first.best_checkpoints
    assert first.best_checkpoints is not first.best_checkpoints  # a list of the caller's own
    assert repr(first).startswith("Result(\n  metrics=")  # printed as Ray prints it
    assert f"\n  path={first.path!r},\n  filesystem='local',\n  checkpoint=" in repr(first)
    with pytest.raises(AttributeError, match="read-only"):
        first.checkpoint = None
    with pytest.raises(TypeError, match="unhashable"):
        hash(first)
    assert first.history is first.history  # read from result.json once


def test_result_from_path_reads_one_trial_from_its_directory(
    experiment: tuple[Tuner, ResultGrid], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, results = experiment
    for result in results:
        loaded = Result.from_path(result.path)
        assert (loaded.trial_id, loaded.config, loaded.metrics) == (
            result.trial_id,
            result.config,
            result.metrics,
        )
        assert loaded.checkpoint is not None
        assert result.checkpoint is not None
        assert loaded.checkpoint.path == result.checkpoint.path
    first = results[0]
    monkeypatch.chdir(Path(first.path).parent)
    assert Result.from_path(Path(first.path).name + "/").trial_id == first.trial_id
    stray = Path(results.experiment_path) / "not_a_trial"
    with pytest.raises(ValueError, match=r"has no trial with that directory \(its trials: "):
        Result.from_path(stray)


def test_experiment_analysis_answers_as_ray_does(experiment: tuple[Tuner, ResultGrid]) -> None:
    _, results = experiment
    analysis = ExperimentAnalysis(str(results.experiment_path))
    assert (analysis.default_metric, analysis.default_mode) == ("loss", "min")
    assert analysis.best_config == {"x": 0}
    assert analysis.get_best_config(metric="loss", mode="min", scope="all") == {"x": 3}
    best = analysis.get_best_trial("loss", "min", "last-5-avg")
    assert best is not None
    assert best.config == {"x": 1}
    assert best.last_result["loss"] == 1.5
    assert str(best) == f"losses_{best.trial_id}"  # its name, as Ray prints a Trial
    assert best.trainable_name.endswith("losses")
    assert analysis.best_result is not None
    assert analysis.best_result["loss"] == 0.0
    checkpoint = analysis.get_best_checkpoint(best)
    assert checkpoint is not None
    assert Path(checkpoint.path, "step").read_text() == "8"
    # Ray's is the newest of the best checkpoints (the newest kept, step 10,
    # is not one of them: see test_best_checkpoints_are_the_kept_ones...).
    last = analysis.get_last_checkpoint(best)
    assert last is not None
    assert Path(last.path, "step").read_text() == "9"
    assert set(analysis.results) == {r.trial_id for r in results}
    assert sorted(analysis.results_df["loss"]) == sorted(v[-1] for v in LOSSES.values())
    # Ray's last results carry the config: its results_df has config/ columns.
    by_trial = analysis.results_df["config/x"].to_dict()
    assert by_trial == {r.trial_id: r.config["x"] for r in results}
    frames = analysis.trial_dataframes
    assert [len(frames[r.trial_id]) for r in results] == [10, 10, 10, 10]
    assert len(analysis.dataframe(metric="loss", mode="min")) == 4
    assert analysis.get_all_configs(prefix=True)[best.trial_id] == {"config/x": 1}


def test_the_loader_reads_a_running_experiment(tmp_path: Path) -> None:
    """Read from inside the run (a callback, called once the result is
    logged), as a second process would. Result files are written off the
    loop, so a reader sees a prefix of the results: never more than were
    reported, never fewer than it saw before, and all of them at the end."""
    seen: list[tuple[int, int, set[TrialStatus]]] = []
    reported = 0

    class Peek(Callback):
        def on_trial_result(self, *args: object, **kwargs: object) -> None:
            nonlocal reported
            reported += 1
            grid = ResultGrid.from_path(tmp_path / "exp")
            count = sum(len(r.history or []) for r in grid)
            seen.append((reported, count, {r.status for r in grid}))

    run(tmp_path, callbacks=[Peek()], name="exp").fit()
    assert reported == 40
    counts = [count for _, count, _ in seen]
    assert counts == sorted(counts)
    assert all(count <= so_far for so_far, count, _ in seen)
    assert all(TrialStatus.RUNNING in statuses for _, _, statuses in seen)
    assert sum(len(r.history or []) for r in ResultGrid.from_path(tmp_path / "exp")) == 40


def test_a_window_scope_without_result_files_says_why(tmp_path: Path) -> None:
    results = tunecore.simulate(
        lambda config, iteration: ({"loss": 1.0}, 1.0),
        tune_config=TuneConfig(metric="loss", mode="min", num_samples=2),
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0),
        max_iterations=3,
    )
    assert results.get_best_result().metrics["loss"] == 1.0
    with pytest.raises(ValueError, match=r"result\.json.*write_results=True"):
        results.get_best_result(scope="last-5-avg")


def test_the_best_of_one_trial_is_that_trial_whatever_is_asked(tmp_path: Path) -> None:
    """As in Ray: `tuner.fit().get_best_result()` of a single run needs no
    metric, and a metric the trial never reported does not fail it."""
    results = tunecore.simulate(
        lambda config, iteration: ({"loss": 1.0}, 1.0),
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0),
        max_iterations=3,
    )
    [only] = results
    assert results.get_best_result() is only
    assert results.get_best_result("never_reported", "max") is only


def test_the_loader_finds_directories_a_dirname_creator_named(tmp_path: Path) -> None:
    def reports(config: dict[str, int]) -> None:
        tunecore.report({"loss": float(config["x"])})

    fitted = Tuner(
        reports,
        param_space={"x": tunecore.grid_search([1, 2])},
        tune_config=TuneConfig(
            metric="loss", mode="min", trial_dirname_creator=lambda t: f"mine-{t.config['x']}"
        ),
        run_config=RunConfig(
            name="named", storage_path=str(tmp_path), verbose=0, executor="in_process"
        ),
    ).fit()
    loaded = ResultGrid.from_path(tmp_path / "named")
    assert [Path(r.path).name for r in loaded] == ["mine-1", "mine-2"]
    assert [r.path for r in loaded] == [r.path for r in fitted]
    assert [len(r.history or []) for r in loaded] == [1, 1]


def test_a_trial_that_never_reported_has_no_row_so_no_column_turns_to_nan(
    tmp_path: Path,
) -> None:
    """Ray 2.60's frame has a row per trial with results (an empty history
    is skipped): a trial that returned without reporting would otherwise
    bring a NaN trial_id and make training_iteration a float column."""

    def silent_when_odd(config: dict[str, int]) -> None:
        if config["x"] % 2 == 0:
            tunecore.report({"score": config["x"]})

    results = Tuner(
        silent_when_odd,
        param_space={"x": tunecore.grid_search([0, 1, 2, 3])},
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    ).fit()
    assert [r.status for r in results] == [TrialStatus.TERMINATED] * 4
    frame = results.get_dataframe()
    assert list(frame["config/x"]) == [0, 2]
    assert list(frame["trial_id"]) == [results[0].trial_id, results[2].trial_id]
    assert frame["training_iteration"].dtype.kind == "i"
    assert frame["score"].dtype.kind == "i"
    assert list(frame["logdir"]) == [results[0].trial_id, results[2].trial_id]


def test_rays_filesystem_idiom_reads_a_local_trials_files(
    experiment: tuple[Tuner, ResultGrid], tmp_path: Path
) -> None:
    import pyarrow.fs  # noqa: PLC0415 - the storage extra

    _, results = experiment
    result = results[0]
    assert isinstance(results.filesystem, pyarrow.fs.LocalFileSystem)
    with result.filesystem.open_input_file(os.path.join(result.path, "result.json")) as file:
        first = json.loads(file.read().decode().splitlines()[0])
    assert first["trial_id"] == result.trial_id
    pyarrow.fs.copy_files(result.path, str(tmp_path / "copy"), source_filesystem=result.filesystem)
    assert (tmp_path / "copy" / "result.json").is_file()


def test_the_filesystem_without_pyarrow_names_the_extra(
    experiment: tuple[Tuner, ResultGrid], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, results = experiment
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.fs", None)
    with pytest.raises(ImportError, match=r"tunecore\[storage\]"):
        _ = results[0].filesystem
    with pytest.raises(ImportError, match=r"tunecore\[storage\]"):
        _ = results.filesystem


def test_a_result_grid_crosses_a_process_boundary_as_rays_does(
    experiment: tuple[Tuner, ResultGrid],
) -> None:
    """A Tuner run in a Ray task returns its grid to the caller (a user's
    script, docs/ray-examples.md #110): Ray pickles it there (cloudpickle)
    and back; a read-only `Result` refused the unpickler's setattr."""
    _, results = experiment
    assert results.get_best_result().metrics_dataframe is not None  # read: not carried over
    copy = cloudpickle.loads(cloudpickle.dumps(results))
    assert isinstance(copy, ResultGrid)
    assert list(copy) == list(results)
    assert copy.get_best_result().config == results.get_best_result().config
    history = copy.get_best_result().metrics_dataframe
    assert history is not None
    assert history["loss"].tolist() == LOSSES[0]
    assert copy.get_best_result(scope="last-5-avg").config["x"] == 1
    assert [t.trial_id for t in copy.trials] == [r.trial_id for r in results]


def test_results_share_their_experiment_directory_and_keep_only_their_own_name(
    experiment: tuple[Tuner, ResultGrid],
) -> None:
    """A grid lives as long as the user keeps it: each result keeps the last
    part of its trial's directory, the directory above it one string every
    result shares (issue 41), and `path`, compared, pickled, is the whole."""
    _, results = experiment
    paths = [r.path for r in results]
    assert all(Path(p).is_dir() and Path(p).parent == Path(results.experiment_path) for p in paths)
    assert len({id(r._parent) for r in results}) == 1
    assert all(r._path == Path(p).name for r, p in zip(results, paths, strict=True))
    copy = cast(list[Result], cloudpickle.loads(cloudpickle.dumps(list(results))))
    assert [r.path for r in copy] == paths
    assert copy == list(results)


def test_a_mode_without_a_metric_means_the_anonymous_metric(tmp_path: Path) -> None:
    """As on Ray 2.60: a scheduler or `TuneConfig` given only a mode takes
    `_metric` (a function's returned number), which strict metric checking
    passes over: ASHA stops the worse trials on it, and `get_best_result`
    ranks by it when the mode was `TuneConfig`'s."""
    results = tunecore.simulate(
        lambda config, iteration: ({"_metric": float(str(config["x"])) * iteration}, 1.0),
        param_space={"x": tunecore.grid_search([4, 3, 2, 1])},
        tune_config=TuneConfig(
            mode="max",
            max_concurrent_trials=1,
            scheduler=ASHAScheduler(max_t=4, grace_period=1, reduction_factor=2),
        ),
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0),
    )
    assert {r.config["x"]: r.metrics["training_iteration"] for r in results} == {
        4: 4,
        3: 1,
        2: 1,
        1: 1,
    }
    assert results.get_best_result().config == {"x": 4}
    ignored = tunecore.simulate(
        lambda config, iteration: ({"score": float(iteration)}, 1.0),
        param_space={"x": tunecore.grid_search([1, 2])},
        tune_config=TuneConfig(scheduler=ASHAScheduler(mode="min", max_t=4, grace_period=1)),
        run_config=RunConfig(storage_path=str(tmp_path / "ignored"), verbose=0),
        max_iterations=4,  # the trainable's own end: ASHA ends nothing here
    )
    assert [r.metrics["training_iteration"] for r in ignored] == [4, 4]
    assert not ignored.errors
