"""PBT's mutated keys missing from the param space are sampled for every
trial, as Ray's PBT fills them (`_fill_config`): the scheduler docs' PBT
example has no param space at all. PB2's bounds are filled uniformly, as
Ray's PB2 fills them."""

from __future__ import annotations

from pathlib import Path

import tunecore as tune
from tunecore.model import JsonDict
from tunecore.schedulers import PB2, PopulationBasedTraining


def reads_its_config(config: dict[str, object]) -> None:
    tune.report({"loss": 1.0, "seen": dict(config)})


def fit(tmp_path: Path, space: dict[str, object] | None) -> list[JsonDict]:
    """Each trial's config as PBT filled it. No perturbation can come (one
    result a trial, the interval at 100): at interval 1, a trial that
    reported while all three were live and tied could exploit another and
    explore `lr` away from what the space gave."""
    pbt = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=100,
        hyperparam_mutations={
            "lr": [1e-3, 1e-4],
            "opt": {"momentum": tune.uniform(0.1, 0.9)},
            "layers": lambda: 7,
        },
    )
    tuner = tune.Tuner(
        reads_its_config,
        param_space=space,
        tune_config=tune.TuneConfig(num_samples=3, metric="loss", mode="min", scheduler=pbt),
        run_config=tune.RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    )
    grid = tuner.fit()
    assert not grid.errors
    return [result.config for result in grid]


def test_every_mutated_key_the_space_lacks_is_sampled(tmp_path: Path) -> None:
    for config in fit(tmp_path, None):
        assert config["lr"] in (1e-3, 1e-4)
        options = config["opt"]
        assert isinstance(options, dict)
        momentum = options["momentum"]
        assert isinstance(momentum, float)
        assert 0.1 <= momentum <= 0.9
        assert config["layers"] == 7


def test_a_key_the_space_has_is_left_as_given(tmp_path: Path) -> None:
    space: dict[str, object] = {"lr": 0.5, "opt": {"momentum": 0.95, "nesterov": True}}
    for config in fit(tmp_path, space):
        assert config["lr"] == 0.5
        assert config["opt"] == {"momentum": 0.95, "nesterov": True}
        assert config["layers"] == 7


def test_pb2_samples_each_bounded_key_the_space_lacks_between_its_bounds(
    tmp_path: Path,
) -> None:
    pb2 = PB2(
        time_attr="training_iteration",
        perturbation_interval=1,
        hyperparam_bounds={"lr": [1e-3, 1e-2], "opt": {"momentum": [0.1, 0.9]}},
    )
    tuner = tune.Tuner(
        reads_its_config,
        param_space={"opt": {"nesterov": True}},
        tune_config=tune.TuneConfig(num_samples=4, metric="loss", mode="min", scheduler=pb2),
        run_config=tune.RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    )
    grid = tuner.fit()
    assert not grid.errors
    lrs = set()
    for result in grid:
        lr, options = result.config["lr"], result.config["opt"]
        assert isinstance(lr, float)
        assert 1e-3 <= lr <= 1e-2
        lrs.add(lr)
        assert isinstance(options, dict)
        assert options["nesterov"] is True
        momentum = options["momentum"]
        assert isinstance(momentum, float)
        assert 0.1 <= momentum <= 0.9
    assert len(lrs) == 4  # drawn, not one of the two bounds
