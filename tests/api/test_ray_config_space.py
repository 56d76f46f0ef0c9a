"""A param space given as a config object of a library built on Ray Tune
(RLlib's `AlgorithmConfig`): Ray's `Tuner` and `tune.run` take any
instance of its `ray.tune.tune._Config` as the dict its `to_dict()` returns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tunecore as tune
from tunecore import RunConfig, Tuner


def _ray_config_class() -> Any:
    pytest.importorskip("fsspec")  # ray.tune needs it; ray[tune], which tunecore depends on, has it
    return pytest.importorskip("ray.tune.tune")._Config


def _algorithm_config(base: Any) -> Any:
    """A config object of RLlib's kind: builder methods, then `to_dict()`."""

    class AlgorithmConfig(base):  # type: ignore[misc]
        def __init__(self) -> None:
            self.lr: object = 0.001
            self.env = "CartPole-v1"

        def training(self, lr: object) -> AlgorithmConfig:
            self.lr = lr
            return self

        def to_dict(self) -> dict[str, object]:
            return {"lr": self.lr, "env": self.env}

    return AlgorithmConfig


def train(config: dict[str, Any]) -> None:
    tune.report({"lr": config["lr"], "env": config["env"]})


def _run(tmp_path: Path) -> RunConfig:
    return RunConfig(storage_path=str(tmp_path), executor="in_process", verbose=0)


def test_tuner_takes_a_ray_config_object_as_its_dict(tmp_path: Path) -> None:
    config = _algorithm_config(_ray_config_class())().training(lr=tune.grid_search([0.1, 0.2]))
    results = Tuner(train, param_space=config, run_config=_run(tmp_path)).fit()
    assert sorted((r.metrics["lr"], r.metrics["env"]) for r in results) == [
        (0.1, "CartPole-v1"),
        (0.2, "CartPole-v1"),
    ]


@pytest.mark.usefixtures("ray_cluster")  # tune.run runs on Ray
def test_run_takes_a_ray_config_object_as_its_config(tmp_path: Path) -> None:
    config = _algorithm_config(_ray_config_class())()
    analysis = tune.run(train, config=config, storage_path=str(tmp_path), verbose=0)
    assert [trial.config for trial in analysis.trials] == [{"lr": 0.001, "env": "CartPole-v1"}]


def test_an_object_of_another_class_with_to_dict_is_refused_as_by_ray() -> None:
    """Ray converts only its own `_Config`: any other object is not a dict."""
    config = _algorithm_config(object)()
    with pytest.raises(TypeError, match=r"param_space=.* is invalid: expected a dict"):
        Tuner(train, param_space=config)
