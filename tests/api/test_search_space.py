"""The search space through `Tuner(...).fit()`, written as Ray Tune users
write it: `sample_from` reading other values, functions drawing their own
randomness, the search seed, and `BasicVariantGenerator`'s options."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest

import tunecore as tune
from tunecore import ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.model import InvalidFieldError, JsonValue, ValuesDrawn
from tunecore.schedulers import PopulationBasedTraining
from tunecore.search import BasicVariantGenerator
from tunecore.shell.callbacks import Callback
from tunecore.shell.eventlog import read_log
from tunecore.shell.replay import replay
from tunecore.shell.trial_view import Trial


def report_config(config: dict[str, JsonValue]) -> None:
    tune.report({"loss": float(config.get("lr", 0.0)), "done_at": 1})  # type: ignore[arg-type]


def fit(
    path: Path,
    space: Mapping[str, object],
    *,
    name: str = "exp",
    **settings: object,
) -> ResultGrid:
    tuner = Tuner(
        report_config,
        param_space=space,
        tune_config=TuneConfig(**settings),  # type: ignore[arg-type]
        run_config=RunConfig(name=name, storage_path=str(path), executor="in_process", verbose=0),
    )
    return tuner.fit()


def configs(grid: ResultGrid) -> list[dict[str, JsonValue]]:
    return [dict(result.config) for result in grid]


# -- sample_from (bug 5) ---------------------------------------------------------------------------


def test_sample_from_reading_other_values_runs_in_fit(tmp_path: Path) -> None:
    space = {
        "x": tune.grid_search([1, 2, 3]),
        "lr": tune.sample_from(lambda spec: 10**-spec.config.x),
        "opt": {
            "momentum": tune.choice([0.9]),
            "nesterov": tune.sample_from(lambda spec: spec.config.opt.momentum > 0.5),
        },
        "double": tune.sample_from(lambda config: config["lr"] * 2),
    }
    grid = fit(tmp_path, space)
    assert not grid.errors
    assert [c["x"] for c in configs(grid)] == [1, 2, 3]
    for config in configs(grid):
        assert config["lr"] == pytest.approx(10 ** -config["x"])  # type: ignore[operator]
        assert config["double"] == pytest.approx(2 * config["lr"])  # type: ignore[operator]
        assert config["opt"] == {"momentum": 0.9, "nesterov": True}


def test_functions_with_their_own_randomness_are_logged_and_replay_needs_no_user_code(
    tmp_path: Path,
) -> None:
    space = {
        "lr": tune.sample_from(lambda _: random.uniform(1e-4, 1e-1)),
        "batch": tune.sample_from(lambda: random.choice([16, 32, 64])),
    }
    grid = fit(tmp_path, space, num_samples=4)
    experiment = tmp_path / "exp"
    contents = read_log(experiment)
    drawn = [event for event in contents.events if isinstance(event, ValuesDrawn)]
    assert len(drawn) == 4
    replayed = replay(experiment)
    by_id = {result.config["lr"]: result.config for result in grid}
    assert {t.spec.config["lr"]: t.spec.config for t in replayed.state.trials.values()} == by_id


def test_sample_from_values_that_are_numpy_scalars_become_plain_numbers(tmp_path: Path) -> None:
    numpy = pytest.importorskip("numpy")
    space = {"units": tune.sample_from(lambda _: numpy.random.randint(1, 5))}
    grid = fit(tmp_path, space, num_samples=2)
    assert all(type(config["units"]) is int for config in configs(grid))


def test_a_failing_function_is_an_error_naming_its_path(tmp_path: Path) -> None:
    space = {"a": {"b": tune.sample_from(lambda spec: spec.config.missing)}}
    with pytest.raises(InvalidFieldError, match=re.escape("param_space['a']['b']")):
        fit(tmp_path, space)


class Crash(BaseException):
    """Stands for the driver dying (not an Exception: callbacks' errors are contained)."""


class CrashAfterResults(Callback):
    def __init__(self, results: int) -> None:
        self.left = results

    def on_trial_result(
        self, iteration: int, trials: object, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        self.left -= 1
        if self.left == 0:
            raise Crash


def test_restore_draws_the_remaining_values_with_the_param_space_given_again(
    tmp_path: Path,
) -> None:
    space = {"x": tune.grid_search([1, 2, 3, 4]), "lr": tune.sample_from(lambda s: s.config.x / 10)}
    tuner = Tuner(
        report_config,
        param_space=space,
        tune_config=TuneConfig(max_concurrent_trials=1),
        run_config=RunConfig(
            name="exp",
            storage_path=str(tmp_path),
            executor="in_process",
            verbose=0,
            callbacks=[CrashAfterResults(2)],
        ),
    )
    with pytest.raises(Crash):
        tuner.fit()
    experiment = tmp_path / "exp"
    with pytest.raises(InvalidFieldError, match=r"param_space=") as raised:
        Tuner.restore(str(experiment), trainable=report_config).fit()
    assert "param_space['lr']" in str(raised.value)
    grid = Tuner.restore(str(experiment), trainable=report_config, param_space=space).fit()
    assert sorted((c["x"], c["lr"]) for c in configs(grid)) == [
        (1, 0.1),
        (2, 0.2),
        (3, 0.3),
        (4, 0.4),
    ]
    assert replay(experiment).state.done


# -- the search seed (bug 14) ----------------------------------------------------------------------

RANDOM = {"a": tune.uniform(0, 1), "b": tune.randint(0, 10**9)}


def test_runs_without_a_seed_sample_different_configs(tmp_path: Path) -> None:
    first = configs(fit(tmp_path, RANDOM, name="one", num_samples=3))
    second = configs(fit(tmp_path, RANDOM, name="two", num_samples=3))
    assert first != second


def test_runs_with_the_same_seed_sample_the_same_configs(tmp_path: Path) -> None:
    first = configs(fit(tmp_path, RANDOM, name="one", num_samples=3, seed=7))
    second = configs(fit(tmp_path, RANDOM, name="two", num_samples=3, seed=7))
    assert first == second


def test_the_drawn_seed_is_printed_once_and_repeats_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tuner = Tuner(
        report_config,
        param_space=RANDOM,
        tune_config=TuneConfig(num_samples=3),
        run_config=RunConfig(name="one", storage_path=str(tmp_path), executor="in_process"),
    )
    first = configs(tuner.fit())
    printed = re.findall(
        r"Search seed: (\d+) \(pass TuneConfig\(seed=(\d+)\) to repeat\)", capsys.readouterr().out
    )
    assert len(printed) == 1
    seed, again = printed[0]
    assert seed == again
    assert configs(fit(tmp_path, RANDOM, name="two", num_samples=3, seed=int(seed))) == first
    replayed = replay(tmp_path / "one")
    replayed_b = {t.spec.config["b"] for t in replayed.state.trials.values()}
    assert replayed_b == {c["b"] for c in first}


def test_seeding_numpy_repeats_an_unseeded_run_as_in_rays_faq(tmp_path: Path) -> None:
    numpy = pytest.importorskip("numpy")
    numpy.random.seed(1234)
    first = configs(fit(tmp_path, RANDOM, name="one", num_samples=3))
    numpy.random.seed(1234)
    second = configs(fit(tmp_path, RANDOM, name="two", num_samples=3))
    third = configs(fit(tmp_path, RANDOM, name="three", num_samples=3))
    assert first == second
    assert third != first


def test_an_unseeded_run_leaves_numpys_unused_generator_unloaded(tmp_path: Path) -> None:
    """NumPy loads `numpy.random` on first use (6 ms of every `fit()` that
    draws its seed there); a script that never used it cannot have seeded
    it, so the seed comes from the OS."""
    pytest.importorskip("numpy")
    script = (
        "import sys, numpy, tunecore\n"
        "from tunecore import RunConfig, Tuner\n"
        "def f(config):\n"
        "    tunecore.report({'x': config['x']})\n"
        "Tuner(f, param_space={'x': tunecore.uniform(0, 1)}, run_config=RunConfig(\n"
        "    storage_path=sys.argv[1], executor='in_process', verbose=0)).fit()\n"
        "print('numpy.random' in sys.modules)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert ran.stdout.strip().splitlines()[-1] == "False"


# -- BasicVariantGenerator's options ---------------------------------------------------------------


def test_points_to_evaluate_run_first_and_partial_points_are_completed_as_in_ray(
    tmp_path: Path,
) -> None:
    """Ray's documented example: four samples give six trials."""
    searcher = BasicVariantGenerator(points_to_evaluate=[{"a": 2, "b": 2}, {"a": 1}, {"b": 2}])
    space = {"a": tune.grid_search([1, 2]), "b": tune.randint(0, 3)}
    grid = fit(tmp_path, space, num_samples=4, search_alg=searcher, seed=3)
    got = [(c["a"], c["b"]) for c in configs(grid)]
    assert len(got) == 6
    assert got[0] == (2, 2)
    assert got[1][0] == 1
    assert got[2:4] == [(1, 2), (2, 2)]
    assert [a for a, _ in got[4:]] == [1, 2]


def test_constant_grid_search_keeps_random_values_across_the_grid(tmp_path: Path) -> None:
    searcher = BasicVariantGenerator(constant_grid_search=True)
    space = {"a": tune.grid_search([1, 2, 3]), "r": tune.uniform(0, 1)}
    got = configs(fit(tmp_path, space, num_samples=2, search_alg=searcher))
    assert len({c["r"] for c in got[:3]}) == 1
    assert len({c["r"] for c in got[3:]}) == 1
    assert got[0]["r"] != got[3]["r"]


# -- PBT's mutation functions (bug 5) --------------------------------------------------------------


def counts_with_checkpoints(config: dict[str, JsonValue]) -> None:
    step = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            step = int((Path(directory) / "step.txt").read_text())
    while step < 8:
        step += 1
        with tempfile.TemporaryDirectory() as directory:
            (Path(directory) / "step.txt").write_text(str(step))
            metrics = {"score": step * float(config["rate"]), "step": step}  # type: ignore[arg-type]
            tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(directory))


def test_pbt_mutation_functions_are_drawn_in_the_shell_and_logged(tmp_path: Path) -> None:
    pbt = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=2,
        hyperparam_mutations={"rate": lambda: random.uniform(100.0, 200.0)},
        resample_probability=1.0,
        quantile_fraction=0.5,
        seed=1,
    )
    tuner = Tuner(
        counts_with_checkpoints,
        param_space={"rate": tune.grid_search([0.5, 1.0, 2.0, 3.0])},
        tune_config=TuneConfig(metric="score", mode="max", scheduler=pbt),
        run_config=RunConfig(
            name="pbt", storage_path=str(tmp_path), executor="in_process", verbose=0
        ),
    )
    grid = tuner.fit()
    assert [r.error for r in grid] == [None] * 4
    rates = [float(r.config["rate"]) for r in grid]
    assert any(100.0 <= rate <= 200.0 for rate in rates)  # an exploit took a function value
    contents = read_log(tmp_path / "pbt")
    drawn = [e for e in contents.events if isinstance(e, ValuesDrawn) and e.owner == "scheduler"]
    assert len(drawn) >= 2
    replayed = replay(tmp_path / "pbt")
    assert sorted(float(t.spec.config["rate"]) for t in replayed.state.trials.values()) == sorted(  # type: ignore[arg-type]
        rates
    )


class Lifecycle(Callback):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_trial_start(self, iteration: int, trials: object, trial: Trial) -> None:
        self.seen.append("start")

    def on_trial_complete(self, iteration: int, trials: object, trial: Trial) -> None:
        self.seen.append("end")


def test_max_concurrent_runs_the_generators_trials_one_at_a_time(tmp_path: Path) -> None:
    lifecycle = Lifecycle()
    tuner = Tuner(
        report_config,
        param_space={"lr": tune.grid_search([0.1, 0.2, 0.3])},
        tune_config=TuneConfig(search_alg=BasicVariantGenerator(max_concurrent=1)),
        run_config=RunConfig(
            name="exp",
            storage_path=str(tmp_path),
            executor="in_process",
            verbose=0,
            callbacks=[lifecycle],
        ),
    )
    assert len(tuner.fit()) == 3
    assert lifecycle.seen == ["start", "end"] * 3


def test_numpy_floats_and_strings_in_a_grid_become_plain_values(tmp_path: Path) -> None:
    """`np.float64` and `np.str_` are `float` and `str` subclasses: they
    passed the JSON check and then the log's encoder refused them
    (`grid_search(list(np.logspace(-3, -1, 3)))`, as Ray's docs write)."""
    numpy = pytest.importorskip("numpy")
    space = {
        "lr": tune.grid_search(list(numpy.logspace(-3, -1, 3))),
        "act": tune.choice(list(numpy.array(["relu", "tanh"]))),
    }
    grid = fit(tmp_path, space)
    assert sorted(float(str(config["lr"])) for config in configs(grid)) == pytest.approx(
        [0.001, 0.01, 0.1]
    )
    assert all(type(c["lr"]) is float and type(c["act"]) is str for c in configs(grid))
