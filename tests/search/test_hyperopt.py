"""`tunecore.search.hyperopt.HyperOptSearch`, Ray Tune's TPE searcher on
hyperopt, driven as the shell drives it: set up, seeded, asked and told."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

pytest.importorskip("hyperopt")

import tunecore
from tests.search.flat_space import EVERY_DOMAIN, SPACE, loss, run, simulated_loss, value_at
from tests.search.logged_runs import (
    assert_a_rebuilt_searcher_repeats_every_logged_suggestion,
    simulated_asks,
)
from tunecore import RunConfig, TuneConfig
from tunecore.core.search import parse_space
from tunecore.model import InvalidFieldError
from tunecore.search import ConcurrencyLimiter
from tunecore.search.hyperopt import HyperOptSearch


def searcher(seed: int = 3, space: dict[str, Any] | None = None, **kwargs: Any) -> HyperOptSearch:
    """Set up as the Tuner sets it up: param space, then the seed."""
    kwargs.setdefault("n_initial_points", 4)
    found = HyperOptSearch(metric="loss", mode="min", **kwargs)
    assert found.set_search_properties(None, None, dict(space or SPACE))
    found.use_seed(seed)
    return found


# -- the space ---------------------------------------------------------------------


def test_every_domain_is_searched_within_it_and_keeps_its_type() -> None:
    found = searcher(space=EVERY_DOMAIN, n_initial_points=5)
    parameters = parse_space(EVERY_DOMAIN).sampled
    seen_categories = []
    for step in range(25):  # random first, then TPE
        config = found.suggest(f"t{step}")
        assert isinstance(config, dict)
        assert config["nested"]["constant"] == "kept"
        for parameter in parameters:
            value = value_at(config, parameter.path)
            assert parameter.domain.is_valid(value), (parameter, value)  # type: ignore[union-attr]
        assert type(config["randint"]) is int
        assert type(config["lograndint"]) is int
        assert type(config["uniform"]) is float
        assert config["one_int"] == 3
        seen_categories.append(config["choice"])
        found.on_trial_complete(f"t{step}", {"loss": float(config["uniform"]) ** 2})
    assert {json.dumps(c) for c in seen_categories} <= {
        '"relu"',
        '{"kind": "tanh"}',
        "[1, 2]",
        "3",
        "true",
    }
    assert len({json.dumps(c) for c in seen_categories}) > 1


@pytest.mark.parametrize(
    "domain", [tunecore.grid_search([1, 2]), tunecore.sample_from(lambda _: 1)]
)
def test_a_grid_or_a_function_is_refused_naming_its_path(domain: Any) -> None:
    space = {"opt": {"lr": domain}, "x": tunecore.uniform(0, 1)}
    with pytest.raises(InvalidFieldError, match=r"^param_space\['opt'\]\['lr'\]"):
        HyperOptSearch(metric="loss", mode="min").set_search_properties(None, None, space)


def _native() -> dict[str, Any]:
    """Ray's conditional space (python/ray/tune/examples/hyperopt_example.py)."""
    from hyperopt import hp  # noqa: PLC0415

    return {
        "activation": hp.choice(
            "activation",
            [{"activation": "relu", "mult": hp.uniform("mult", 1, 2)}, {"activation": "tanh"}],
        ),
        "width": hp.uniform("width", 0, 20),
        "steps": 100,
    }


def _native_objective(config: dict[str, Any]) -> float:
    return float(config["width"] * config["activation"].get("mult", 1.0))


def test_a_space_of_hyperopt_expressions_is_searched_as_given_and_has_a_spec() -> None:
    native, objective = _native, _native_objective
    answers = []
    for _ in range(2):
        found = HyperOptSearch(
            native(),
            metric="loss",
            mode="min",
            n_initial_points=3,
            random_state_seed=4,
            points_to_evaluate=[{"width": 1.0, "activation": 1}],  # by index: dict options
        )
        assert not found.set_search_properties(None, None, {})
        configs = []
        for step in range(8):
            config = found.suggest(f"t{step}")
            assert isinstance(config, dict)
            found.on_trial_complete(f"t{step}", {"loss": objective(config)})
            configs.append(config)
        answers.append(configs)
        spec = found.to_spec()
        assert spec is not None
        assert msgspec.json.decode(msgspec.json.encode(spec)) == spec  # plain JSON
        with pytest.raises(NotImplementedError):
            found.add_evaluated_point({"width": 1.0}, 1.0)
    assert answers[0] == answers[1]
    first, *rest = answers[0]
    assert first == {"activation": {"activation": "tanh"}, "width": 1.0, "steps": 100}
    assert msgspec.json.decode(msgspec.json.encode(rest)) == rest  # plain JSON
    for config in rest:
        assert 0 <= config["width"] <= 20
        assert config["steps"] == 100
        mult = config["activation"].get("mult")
        assert (config["activation"]["activation"] == "relu") == (mult is not None)
        assert mult is None or 1 <= mult <= 2
    with pytest.raises(InvalidFieldError, match=r"points_to_evaluate\[0\]\['activation'\]"):
        HyperOptSearch(native(), points_to_evaluate=[{"width": 1.0, "activation": 2}])


def test_a_searcher_rebuilt_from_the_spec_of_hyperopt_expressions_suggests_the_same() -> None:
    """Ray pickles the searcher for `Tuner.restore`; tunecore records the
    graph of `hp.*` expressions as JSON (ray-project/ray#30223's restore)."""
    from hyperopt import hp  # noqa: PLC0415

    shared = hp.uniform("shared", 0, 1)  # one expression used twice stays one
    space = {**_native(), "again": {"x": shared, "y": shared}, "q": hp.quniform("q", 1, 9, 2)}
    first = HyperOptSearch(
        space,
        metric="loss",
        mode="min",
        n_initial_points=2,
        random_state_seed=3,
        points_to_evaluate=[{"width": 2.0, "activation": 1, "shared": 0.5, "q": 3.0}],
    )
    spec = first.to_spec()
    assert spec is not None
    rebuilt = HyperOptSearch.from_spec(spec)
    assert rebuilt.to_spec() == spec
    for step in range(6):
        config = first.suggest(f"t{step}")
        assert config == rebuilt.suggest(f"t{step}")
        assert isinstance(config, dict)
        assert config["again"]["x"] == config["again"]["y"]
        for found in (first, rebuilt):
            found.on_trial_complete(f"t{step}", {"loss": _native_objective(config)})
    assert first.suggest("last") == rebuilt.suggest("last")


def test_every_hp_builder_and_expression_arithmetic_has_a_spec_that_rebuilds_it() -> None:
    """Each of hyperopt's `hp.*` builders, and arithmetic on expressions,
    makes only functions `HYPEROPT_FUNCTIONS` names: the space is data."""
    from hyperopt import hp as stubbed  # noqa: PLC0415

    hp: Any = stubbed  # its stub holds only what tunecore calls; this calls every builder

    x = hp.uniform("x", 1, 2)
    space = {
        "quniform": hp.quniform("quniform", 0, 10, 1),
        "loguniform": hp.loguniform("loguniform", -3, 0),
        "qloguniform": hp.qloguniform("qloguniform", 0, 3, 1),
        "normal": hp.normal("normal", 0, 1),
        "qnormal": hp.qnormal("qnormal", 0, 1, 1),
        "lognormal": hp.lognormal("lognormal", 0, 1),
        "qlognormal": hp.qlognormal("qlognormal", 0, 1, 1),
        "randint": hp.randint("randint", 5),
        "randint_from": hp.randint("randint_from", 2, 5),
        "uniformint": hp.uniformint("uniformint", 1, 5),
        "choice": hp.choice("choice", ["a", {"inner": hp.uniform("inner", 0, 1)}, [1, 2]]),
        "pchoice": hp.pchoice("pchoice", [(0.5, "p"), (0.5, "q")]),
        "arithmetic": [x + 1, 1 - x, x * 2, 2 / x, x // 1, x**2, -x],
    }
    first = HyperOptSearch(space, metric="loss", mode="min", random_state_seed=5)
    spec = first.to_spec()
    assert spec is not None
    rebuilt = HyperOptSearch.from_spec(spec)
    for step in range(3):
        config = first.suggest(f"t{step}")
        assert config == rebuilt.suggest(f"t{step}")
        assert isinstance(config, dict)
        value = config["arithmetic"][0] - 1
        assert config["arithmetic"] == pytest.approx(
            [
                value + 1,
                1 - value,
                value * 2,
                2 / value,
                value // 1,
                value**2,
                -value,
            ]
        )
        for found in (first, rebuilt):
            found.on_trial_complete(f"t{step}", {"loss": float(step)})


def test_a_space_of_hyperopt_expressions_holding_code_has_no_spec() -> None:
    from hyperopt import hp  # noqa: PLC0415
    from hyperopt.pyll import scope  # noqa: PLC0415

    def _doubled_for_tunecore_test(x: float) -> float:
        return 2 * x

    if not hasattr(scope, "_doubled_for_tunecore_test"):  # a second run in one process
        scope.define(_doubled_for_tunecore_test)

    class Layer:
        pass

    for space in (
        {"w": scope._doubled_for_tunecore_test(hp.uniform("w", 0, 1))},  # the user's function
        {"layer": hp.choice("layer", [Layer, None])},  # an object among the options
        {"w": hp.uniform("w", 0, float("inf"))},  # no JSON number
    ):
        found = HyperOptSearch(space, metric="loss", mode="min")
        with pytest.warns(UserWarning, match=r"search_alg="):
            assert found.to_spec() is None


def test_a_point_for_a_space_of_hyperopt_expressions_names_a_choice_by_value() -> None:
    from hyperopt import hp  # noqa: PLC0415

    space = {"act": hp.choice("act", ["relu", "tanh"]), "nested": {"w": hp.uniform("w", 0, 1)}}
    found = HyperOptSearch(
        space, metric="loss", mode="min", points_to_evaluate=[{"act": "tanh", "nested": {"w": 0.5}}]
    )
    assert found.suggest("a") == {"act": "tanh", "nested": {"w": 0.5}}
    with pytest.raises(InvalidFieldError, match=r"^points_to_evaluate\[0\]\['act'\]"):
        HyperOptSearch(space, points_to_evaluate=[{"act": "gelu", "nested": {"w": 0.5}}])
    missing = HyperOptSearch(space, metric="loss", mode="min", points_to_evaluate=[{"act": "tanh"}])
    with pytest.raises(ValueError, match="every hyperopt label"):
        missing.suggest("a")


def test_a_space_given_to_the_constructor_is_kept() -> None:
    found = HyperOptSearch(dict(SPACE), metric="loss", mode="min", random_state_seed=1)
    assert not found.set_search_properties(None, None, {})
    config = found.suggest("a")
    assert isinstance(config, dict)
    assert config["steps"] == 100
    assert config["activation"] in ("relu", "tanh")


# -- determinism and rebuild ----------------------------------------------------


def test_the_same_seed_gives_the_same_run_and_another_seed_another() -> None:
    first = run(searcher(seed=5), 12)  # 4 random, then TPE
    assert run(searcher(seed=5), 12) == first
    assert run(searcher(seed=6), 12) != first


def test_a_seed_the_user_gives_wins_over_the_experiments() -> None:
    given = run(searcher(seed=5, random_state_seed=11), 6)
    assert run(searcher(seed=6, random_state_seed=11), 6) == given


@pytest.mark.slow  # a process of its own per run: the `slow` session
def test_the_run_is_the_same_in_another_process() -> None:
    """No hash order or global RNG in it: PYTHONHASHSEED does not matter."""
    script = (
        "import json, tunecore\n"
        "from tests.search.test_hyperopt import run, searcher\n"
        "print(json.dumps(run(searcher(seed=5), 8)))\n"
    )
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=Path(__file__).parents[2],
        )
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert outputs[0] == outputs[1] == run(searcher(seed=5), 8)


def test_from_spec_replaying_the_same_asks_and_tells_suggests_what_the_original_does() -> None:
    original = searcher(seed=9, points_to_evaluate=[{"x": 1.0, "activation": "tanh"}])
    spec = original.to_spec()
    assert spec is not None
    assert msgspec.json.decode(msgspec.json.encode(spec)) == spec  # plain JSON
    rebuilt = HyperOptSearch.from_spec(spec)
    for found in (original, rebuilt):
        run(found, 6)
        found.suggest("errored")
        found.on_trial_complete("errored", None, error=True)
        found.suggest("early")
        found.on_trial_complete("early", None)  # ended without a result
        found.add_evaluated_point({"x": 3.0, "activation": "tanh", "steps": 100}, 0.0)
    assert original.to_spec() == spec  # it describes the searcher before its first ask
    assert rebuilt.suggest("next") == original.suggest("next")


# -- Ray's behaviour ----------------------------------------------------------------


def test_points_to_evaluate_come_first_in_order_categories_by_value() -> None:
    points = [{"x": 1.0, "activation": "tanh"}, {"x": 9.5, "activation": "relu"}]
    found = searcher(points_to_evaluate=points)
    first, second, third = run(found, 3)
    assert first == {"x": 1.0, "activation": "tanh", "steps": 100}
    assert second == {"x": 9.5, "activation": "relu", "steps": 100}
    assert third not in (first, second)


def test_a_point_outside_the_space_is_refused_naming_it() -> None:
    with pytest.raises(InvalidFieldError, match=r"points_to_evaluate\[0\]\['activation'\]"):
        searcher(points_to_evaluate=[{"x": 1.0, "activation": "gelu"}])
    with pytest.raises(InvalidFieldError, match=r"points_to_evaluate\[0\]\['x'\]"):
        searcher(points_to_evaluate=[{"activation": "relu"}])


@pytest.mark.parametrize(("mode", "sign"), [("min", 1.0), ("max", -1.0)])
def test_tpe_finds_the_optimum_minimising_or_maximising(mode: str, sign: float) -> None:
    found = HyperOptSearch(metric="loss", mode=mode, n_initial_points=10, random_state_seed=2)
    found.set_search_properties(None, None, dict(SPACE))
    configs = run(found, 40, sign=sign)
    best = min(configs, key=loss)
    assert loss(best) < 0.05
    # It learnt the choice: random search picks tanh 10 times in 20 on average.
    assert sum(c["activation"] == "tanh" for c in configs[20:]) >= 14


def test_points_evaluated_elsewhere_guide_tpe() -> None:
    found = searcher(n_initial_points=10)
    for step in range(20):
        x = step / 2.0
        config = {"x": x, "activation": "tanh", "steps": 100}
        found.add_evaluated_point(config, loss(config))
    found.add_evaluated_point({"x": 5.0, "activation": "relu"}, 0.0, error=True)
    suggested = run(found, 10)
    assert sum(abs(c["x"] - 3.0) < 1.5 for c in suggested) >= 6


def test_nan_results_and_errors_do_not_break_the_search() -> None:
    found = searcher(n_initial_points=2)
    for step in range(6):
        found.suggest(f"t{step}")
        if step % 2:
            found.on_trial_complete(f"t{step}", {"loss": float("nan")})
        else:
            found.on_trial_complete(f"t{step}", None, error=True)
    assert isinstance(found.suggest("next"), dict)


# -- errors -------------------------------------------------------------------------


def test_without_hyperopt_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hyperopt", None)
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[hyperopt\]'"):
        HyperOptSearch()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"n_initial_points": -1}, "HyperOptSearch.n_initial_points"),
        ({"random_state_seed": 1.5}, "HyperOptSearch.random_state_seed"),
        ({"gamma": 0.0}, "HyperOptSearch.gamma"),
        ({"gamma": "0.25"}, "HyperOptSearch.gamma"),
        ({"metric": ["a", "b"], "mode": ["min", "max"]}, "HyperOptSearch.metric"),
        ({"mode": "best"}, "HyperOptSearch.mode"),
        ({"points_to_evaluate": {"x": 1}}, "HyperOptSearch.points_to_evaluate"),
    ],
)
def test_a_bad_argument_is_refused_naming_it(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidFieldError, match=f"^{field}"):
        HyperOptSearch(**kwargs)


def test_asking_without_a_space_or_a_metric_says_what_is_missing() -> None:
    with pytest.raises(RuntimeError, match="no search space"):
        HyperOptSearch(metric="loss", mode="min").suggest("a")
    with pytest.raises(RuntimeError, match="no metric and mode"):
        HyperOptSearch(dict(SPACE)).suggest("a")


def test_a_result_without_the_metric_names_it() -> None:
    found = searcher()
    found.suggest("a")
    with pytest.raises(RuntimeError, match="'loss'"):
        found.on_trial_complete("a", {"score": 1.0})


# -- in an experiment -------------------------------------------------------------


def test_in_an_experiment_a_rebuilt_searcher_repeats_every_logged_suggestion(
    tmp_path: Path,
) -> None:
    searcher = ConcurrencyLimiter(HyperOptSearch(n_initial_points=4), max_concurrent=4)
    simulated_asks(searcher, tmp_path / "sim", samples=16, seed=4, iterations=2)
    assert_a_rebuilt_searcher_repeats_every_logged_suggestion(tmp_path / "sim")


def test_a_warm_start_tells_it_every_finished_trial_of_an_earlier_experiment(
    tmp_path: Path,
) -> None:
    def fit(search_alg: object, name: str, samples: int, seed: int) -> list[Any]:
        return simulated_asks(search_alg, tmp_path / name, samples=samples, seed=seed)

    fit(None, "earlier", 12, 1)  # random search
    cold = fit(HyperOptSearch(n_initial_points=10), "cold", 3, 2)
    warmed = HyperOptSearch(n_initial_points=10).warm_start(from_experiment=tmp_path / "earlier")
    warm = fit(warmed, "warm", 3, 2)
    # With 12 trials told, TPE models from the first ask; cold, it draws at random.
    assert warm != cold


def test_a_restored_searcher_searches_the_other_experiments_space_when_given_none(
    tmp_path: Path,
) -> None:
    """Ray's `Searcher.save` docstring: a fresh searcher restored from the
    saved one runs in a Tuner given no param space and no metric, which
    Ray's restore brings back from its pickle."""

    def fit(search_alg: object, name: str, **tuner: Any) -> list[Any]:
        grid = tunecore.simulate(
            simulated_loss,
            tune_config=TuneConfig(search_alg=search_alg, num_samples=3, seed=5),
            run_config=RunConfig(storage_path=str(tmp_path), name=name, verbose=0),
            max_iterations=1,
            **tuner,
        )
        assert not grid.errors
        return [result.config for result in grid]

    fit(HyperOptSearch(metric="loss", mode="min"), "first", param_space=dict(SPACE))
    restored = HyperOptSearch()
    restored.restore_from_dir(tmp_path / "first")
    configs = fit(ConcurrencyLimiter(restored, max_concurrent=1), "second")
    assert [sorted(config) for config in configs] == [["activation", "steps", "x"]] * 3
    assert all(0.0 <= config["x"] <= 10.0 and config["steps"] == 100 for config in configs)
    assert restored.metric == "loss"


def test_with_a_space_of_its_own_the_tuners_constants_are_in_every_config(
    tmp_path: Path,
) -> None:
    """Ray's SearchGenerator merges the param space into each suggestion:
    the ZOOptSearch docstring's `param_space={"iterations": 10}` beside a
    searcher's own space reaches the trainable."""
    grid = tunecore.simulate(
        simulated_loss,
        param_space={"steps": 100, "nested": {"k": 1}},
        tune_config=TuneConfig(
            search_alg=HyperOptSearch(
                space={"x": tunecore.uniform(0.0, 10.0), "activation": tunecore.choice(["relu"])},
                metric="loss",
                mode="min",
            ),
            num_samples=2,
            seed=3,
        ),
        run_config=RunConfig(storage_path=str(tmp_path), name="own", verbose=0),
        max_iterations=1,
    )
    assert not grid.errors
    assert [(r.config["steps"], r.config["nested"]) for r in grid] == [(100, {"k": 1})] * 2


def test_a_spec_that_is_not_one_to_spec_wrote_is_refused_naming_the_field() -> None:
    spec = searcher().to_spec()
    assert spec is not None
    with pytest.raises(InvalidFieldError, match=r"HyperOptSearch\.from_spec.*gamma"):
        HyperOptSearch.from_spec({**spec, "gamma": "high"})
