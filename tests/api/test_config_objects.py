"""Objects in a param space (ray.put refs, models, Checkpoints): the log
holds placeholders, the trials get the objects, a restore takes them again."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

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
    with pytest.raises(MissingObjectError, match="'ref'.*<ObjectRef ref\\[1\\]>"):
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
    tunecore.report({"model_id": model.model_id})


def test_a_choice_of_objects_reaches_each_trial(tmp_path: Path) -> None:
    models = [Model(1), Model(2)]
    results = Tuner(
        reports_its_model,
        param_space={"model": tunecore.choice(models)},
        tune_config=TuneConfig(num_samples=4, seed=3),
        run_config=RunConfig(storage_path=str(tmp_path), name="pick", executor="in_process"),
    ).fit()
    assert not results.errors
    for result in results:
        index = int(str(result.config["model"]).removeprefix("<Model model[").rstrip("]>"))
        assert result.config["model"] == f"<Model model[{index}]>"
        assert result.metrics["model_id"] == models[index].model_id
