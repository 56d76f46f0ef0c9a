"""Objects in a param space (ray.put refs, models, Checkpoints): the log
holds placeholders, the trials get the objects, a restore takes them again."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.api.config_objects import split_objects
from tunecore.core.search.domains import Choice, GridSearch
from tunecore.model import JsonDict
from tunecore.search.object_values import ObjectChoice
from tunecore.shell.trainable.config_objects import ConfigObjects, MissingObjectError


@dataclass
class Model:
    model_id: int
    fails: bool = False


# -- the split and the resolve --------------------------------------------------------------------


def test_objects_are_split_out_of_constants_grids_and_choices() -> None:
    first, second, constant, nested = Model(1), Model(2), Model(3), Model(4)
    checkpoint = tunecore.Checkpoint("/tmp/somewhere")
    space, objects = split_objects(
        {
            "grid": tunecore.grid_search([first, 0.5]),
            "pick": tunecore.choice(["plain", second]),
            "model": constant,
            "nested": {"layers": [nested, 7]},
            "checkpoint": checkpoint,
            "lr": tunecore.uniform(0, 1),
            "plain": tunecore.grid_search([1, 2]),
        }
    )
    assert space["grid"] == {"grid_search": ["<Model grid[0]>", 0.5]}
    assert space["pick"] == Choice(["plain", "<Model pick[1]>"])
    assert space["model"] == "<Model model>"
    assert space["nested"] == {"layers": ["<Model nested/layers/0>", 7]}
    assert space["checkpoint"] == "<Checkpoint checkpoint>"
    assert space["lr"] == tunecore.uniform(0, 1)
    assert space["plain"] == GridSearch([1, 2])
    config: JsonDict = {
        "grid": "<Model grid[0]>",
        "pick": "<Model pick[1]>",
        "model": "<Model model>",
        "nested": {"layers": ["<Model nested/layers/0>", 7]},
        "checkpoint": "<Checkpoint checkpoint>",
        "lr": 0.3,
    }
    resolved = objects.resolve(config)
    assert resolved["grid"] is first
    assert resolved["pick"] is second
    assert resolved["model"] is constant
    assert resolved["nested"] == {"layers": [nested, 7]}
    assert resolved["checkpoint"] is checkpoint
    assert resolved["lr"] == 0.3
    assert config["model"] == "<Model model>"  # the config given is left as it was


def test_choice_and_grid_over_json_stay_the_core_domains() -> None:
    assert tunecore.choice([1, "a"]) == Choice([1, "a"])
    assert tunecore.grid_search([1, 2]) == GridSearch([1, 2])
    assert isinstance(tunecore.choice([Model(1)]), ObjectChoice)
    assert tunecore.grid_search([Model(1)]) == {"grid_search": [Model(1)]}


def test_a_placeholder_without_its_object_is_an_error_naming_the_key() -> None:
    objects = ConfigObjects({(("model",), None): Model(1)})
    with pytest.raises(MissingObjectError, match=r"'ref'.*<ObjectRef ref\[1\]>"):
        objects.resolve({"model": "<Model model>", "ref": "<ObjectRef ref[1]>"})


def test_without_objects_no_string_is_taken_for_a_placeholder() -> None:
    assert ConfigObjects().resolve({"model": "<Model model>"}) == {"model": "<Model model>"}


def test_a_searcher_given_objects_directly_refuses_them_naming_the_key() -> None:
    with pytest.raises(ValueError, match=r"param_space\['m'\]"):
        tunecore.search.BasicVariantGenerator({"m": Model(1)})


# -- in-process: a choice of objects -------------------------------------------------------------


def reports_its_model(config: dict[str, object]) -> None:
    model = config["model"]
    assert isinstance(model, Model), model
    start = config.get("start")
    tunecore.report({"model_id": model.model_id, "start": getattr(start, "path", None)})


def test_a_choice_of_objects_reaches_each_trial(tmp_path: Path) -> None:
    models = [Model(1), Model(2)]
    start = tunecore.Checkpoint(str(tmp_path / "start"))
    results = Tuner(
        reports_its_model,
        param_space={"model": tunecore.choice(models), "start": start},
        tune_config=TuneConfig(num_samples=4, seed=3),
        run_config=RunConfig(storage_path=str(tmp_path), name="pick", executor="in_process"),
    ).fit()
    assert not results.errors
    for result in results:
        # In the driver that ran them, the results show the objects, as Ray's do.
        model = result.config["model"]
        assert any(model is candidate for candidate in models)
        assert result.config["start"] is start
        assert result.metrics["model_id"] == model.model_id
        assert result.metrics["start"] == start.path
    # What was recorded holds the placeholders: read back, the results show them.
    for result in tunecore.ResultGrid.from_path(tmp_path / "pick"):
        index = int(str(result.config["model"]).removeprefix("<Model model[").rstrip("]>"))
        assert result.config["model"] == f"<Model model[{index}]>"
        assert result.config["start"] == "<Checkpoint start>"
        assert result.metrics["model_id"] == models[index].model_id


class SeesConfigs(tunecore.Callback):
    def __init__(self) -> None:
        self.models: list[Any] = []

    def on_trial_complete(
        self, iteration: int, trials: Sequence[tunecore.Trial], trial: tunecore.Trial, **info: Any
    ) -> None:
        self.models.append(trial.config["model"])


@pytest.mark.usefixtures("ray_cluster")
def test_callbacks_and_the_analysis_see_the_objects_as_rays_trials_show_them(
    tmp_path: Path,
) -> None:
    models = [Model(1), Model(2)]
    seen = SeesConfigs()
    analysis = tunecore.run(
        reports_its_model,
        config={"model": tunecore.grid_search(models), "lr": 0.5},
        callbacks=[seen],
        metric="model_id",
        mode="max",
        storage_path=str(tmp_path),
        name="views",
        verbose=0,
    )
    assert sorted(m.model_id for m in seen.models) == [1, 2]
    assert all(any(m is model for model in models) for m in seen.models)
    best: dict[str, Any] | None = analysis.get_best_config()
    assert best is not None
    assert best["model"] is models[1]
    configs: list[Any] = [t.config for t in analysis.trials]
    assert {config["model"].model_id for config in configs} == {1, 2}


def test_a_model_based_searcher_picks_among_the_placeholders(tmp_path: Path) -> None:
    pytest.importorskip("optuna")
    from tunecore.search.optuna import OptunaSearch  # noqa: PLC0415 - an optional extra

    models = [Model(1), Model(2)]
    results = Tuner(
        reports_its_model,
        param_space={"model": tunecore.choice(models)},
        tune_config=TuneConfig(
            search_alg=OptunaSearch(seed=1), metric="model_id", mode="max", num_samples=3
        ),
        run_config=RunConfig(
            storage_path=str(tmp_path), name="optuna", executor="in_process", verbose=0
        ),
    ).fit()
    assert not results.errors
    for result in results:
        assert result.metrics["model_id"] == result.config["model"].model_id


# -- on Ray: refs in a grid, an object constant, a restore ----------------------------------------


def uses_the_models(config: dict[str, Any]) -> None:
    import ray  # noqa: PLC0415 - runs in a Ray worker

    model = ray.get(config["model_ref"])
    scaler = config["scaler"]
    assert isinstance(model, Model)
    assert isinstance(scaler, Model)
    if scaler.fails and model.model_id == 2:
        raise RuntimeError("this scaler fails on model 2")
    tunecore.report({"model_id": model.model_id, "scaled": model.model_id * scaler.model_id})


def objects_space(*, fails: bool) -> dict[str, object]:
    import ray  # noqa: PLC0415 - the Ray tests only

    refs = [ray.put(Model(1)), ray.put(Model(2))]
    return {"model_ref": tunecore.grid_search(refs), "scaler": Model(10, fails), "lr": 0.1}


@pytest.mark.usefixtures("ray_cluster")
def test_refs_in_a_grid_and_an_object_constant_on_ray_then_restored(tmp_path: Path) -> None:
    results = Tuner(
        uses_the_models,
        param_space=objects_space(fails=True),
        run_config=RunConfig(storage_path=str(tmp_path), name="objects", verbose=0),
    ).fit()
    assert [r.metrics.get("model_id") for r in results if not r.error] == [1]
    assert len(results.errors) == 1
    import ray  # noqa: PLC0415 - the Ray tests only

    assert sorted(ray.get(r.config["model_ref"]).model_id for r in results) == [1, 2]
    for result in results:
        assert isinstance(result.config["scaler"], Model)  # the objects, in this driver
        assert result.path is not None
        params = json.loads(Path(result.path, "params.json").read_text())
        assert params["scaler"] == "<Model scaler>"  # the stand-ins, never a pickle
        assert params["model_ref"] in {"<ObjectRef model_ref[0]>", "<ObjectRef model_ref[1]>"}
        assert params["lr"] == result.config["lr"] == 0.1
        assert "model_ref=_ObjectRef_model_ref_" in Path(result.path).name  # a readable name
    experiment = tmp_path / "objects"
    with pytest.raises(MissingObjectError, match=r"param_space\['model_ref'\] \(value 0"):
        Tuner.restore(str(experiment), trainable=uses_the_models, resume_errored=True).fit()
    with pytest.raises(MissingObjectError, match=r"param_space\['scaler'\]"):
        Tuner.restore(
            str(experiment),
            trainable=uses_the_models,
            param_space={"model_ref": objects_space(fails=False)["model_ref"]},
            resume_errored=True,
        ).fit()
    restored = Tuner.restore(
        str(experiment),
        trainable=uses_the_models,
        param_space=objects_space(fails=False),  # new refs, and a scaler that works
        resume_errored=True,
    ).fit()
    assert not restored.errors
    assert sorted(str(r.metrics["scaled"]) for r in restored) == ["10", "20"]


class HoldsItsModel(tunecore.Trainable):
    def setup(self, config: dict[str, Any]) -> None:
        model = config["model"]
        assert isinstance(model, Model), model
        self.setup_id: int = model.model_id
        self.resets: int = 0

    def step(self) -> JsonDict:
        model = self.config["model"]
        assert isinstance(model, Model), model
        return {
            "model_id": model.model_id,
            "setup_id": self.setup_id,
            "resets": self.resets,
            "done": True,
        }

    def reset_config(self, new_config: dict[str, Any]) -> bool:
        model = new_config["model"]
        assert isinstance(model, Model), model
        self.setup_id = model.model_id
        self.resets += 1
        return True


@pytest.mark.usefixtures("ray_cluster")
def test_a_reused_trainable_gets_the_objects_in_setup_and_reset_config(tmp_path: Path) -> None:
    models = [Model(1), Model(2), Model(3)]
    results = Tuner(
        HoldsItsModel,
        param_space={"model": tunecore.grid_search(models)},
        tune_config=TuneConfig(reuse_actors=True, max_concurrent_trials=1),
        run_config=RunConfig(storage_path=str(tmp_path), name="reused", verbose=0),
    ).fit()
    assert not results.errors
    by_config = {r.config["model"].model_id: r.metrics for r in results}
    assert set(by_config) == {1, 2, 3}
    for model in models:
        metrics = by_config[model.model_id]
        assert metrics["model_id"] == metrics["setup_id"] == model.model_id
    assert any(metrics["resets"] != 0 for metrics in by_config.values())  # reset_config ran
