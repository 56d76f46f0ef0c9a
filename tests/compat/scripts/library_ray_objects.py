# mypy: ignore-errors
# timeout: 240
# requires: fsspec
"""A library built on Ray Tune hands the script Ray's own objects: its
config object as the param space, search domains built with Ray's
`ray.tune.search.sample`, and its trainable's resource request as Ray's
`PlacementGroupFactory`.

Follows RLlib's `rllib/examples/ray_tune/custom_experiment.py` (Ray 2.60,
docs/ray-examples.md row 500): `tune.with_resources(my_experiment,
resources=base_config.algo_class.default_resource_request(base_config))`,
a function trainable building the algorithm from the config dict each
trial gets (each iteration saved as Ray's `Checkpoint`, as `algo.save()`
returns it, and reported), and `tune.Tuner(..., param_space=config)` with the config
object itself (RLlib's `AlgorithmConfig` subclasses Ray's `_Config`,
whose `to_dict()` Ray's Tuner takes). RLlib needs gymnasium and torch, so
the algorithm is a closed form here; the library's classes are built on
Ray Tune's own, in imports that are not the user's to rewrite.
"""

import os
import tempfile

from ray.train import Checkpoint as RayCheckpoint  # the library's (RLlib's algo.save())
from ray.tune.execution.placement_groups import PlacementGroupFactory as RayPGF  # the library's
from ray.tune.search import sample as ray_sample  # the library's
from ray.tune.tune import _Config  # the library's base (RLlib's AlgorithmConfig)

import tunecore as tune


class AlgorithmConfig(_Config):
    """The library's config: builder methods, `to_dict()`, a preset space."""

    def __init__(self):
        self.lr = ray_sample.loguniform(1e-4, 1e-1)  # the library's default search space
        self.num_layers = ray_sample.choice([2, 4])
        self.env = "CartPole-v1"

    def training(self, **kwargs):
        for name, value in kwargs.items():
            setattr(self, name, value)
        return self

    def to_dict(self):
        return {"lr": self.lr, "num_layers": self.num_layers, "env": self.env}

    def default_resource_request(self):
        # One CPU for the algorithm, half a CPU for its env runner.
        return RayPGF([{"CPU": 1}, {"CPU": 0.5}])


def my_experiment(config):
    train_iterations = config.pop("train-iterations", 2)
    assert isinstance(config["lr"], float), config["lr"]  # sampled, not Ray's domain object
    resources = tune.get_context().get_trial_resources()
    for i in range(train_iterations):
        # The library saves the algorithm as Ray's own Checkpoint.
        saved = tempfile.mkdtemp()
        with open(os.path.join(saved, "algorithm_state.txt"), "w") as f:
            f.write(f"iteration {i + 1}")
        tune.report(
            {
                "episode_return_mean": 100 * (1 - config["lr"]) * (i + 1) / config["num_layers"],
                "lr": config["lr"],
                "bundles": resources.bundles,
            },
            checkpoint=RayCheckpoint.from_directory(saved),
        )


if __name__ == "__main__":
    base_config = AlgorithmConfig()
    config_dict = base_config.to_dict()
    config_dict["train-iterations"] = 3

    training_function = tune.with_resources(
        my_experiment, resources=base_config.default_resource_request()
    )
    results = tune.Tuner(
        training_function,
        param_space=config_dict,
        tune_config=tune.TuneConfig(num_samples=2, metric="episode_return_mean", mode="max"),
    ).fit()
    assert not results.errors, results.errors
    for result in results:
        assert 1e-4 <= result.metrics["lr"] <= 1e-1
        assert result.config["num_layers"] in (2, 4)
        assert result.metrics["training_iteration"] == 3
        assert result.metrics["bundles"] == [{"CPU": 1.0}, {"CPU": 0.5}], result.metrics
        with result.checkpoint.as_directory() as saved:
            with open(os.path.join(saved, "algorithm_state.txt")) as f:
                assert f.read() == "iteration 3"

    # The config object itself as the param space, a grid set through it.
    grid_config = AlgorithmConfig().training(lr=tune.grid_search([0.01, 0.02]), num_layers=2)
    results = tune.Tuner(my_experiment, param_space=grid_config).fit()
    assert not results.errors, results.errors
    assert sorted(result.metrics["lr"] for result in results) == [0.01, 0.02]
    best = results.get_best_result(metric="episode_return_mean", mode="max")
    assert best.config == {"lr": 0.01, "num_layers": 2, "env": "CartPole-v1"}, best.config
    print("best:", best.config)
