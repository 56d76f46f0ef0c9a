"""`tunecore.search.nevergrad.NevergradSearch`, Ray Tune's nevergrad
searcher, driven as the shell drives it: set up, seeded, asked and told."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

import tunecore
from tests.search.flat_space import EVERY_DOMAIN, SPACE, loss, run, value_at
from tests.search.logged_runs import (
    assert_a_rebuilt_searcher_repeats_every_logged_suggestion,
    simulated_asks,
)
from tests.search.resume_properties import crash_anywhere, restore_continues, same_log_bytes
from tunecore.core.search import parse_space
from tunecore.model import InvalidFieldError
from tunecore.search import ConcurrencyLimiter, create_searcher
from tunecore.search.nevergrad import NevergradSearch

try:  # nevergrad imported as tunecore imports it (beside bayesian-optimization 3)
    NevergradSearch("OnePlusOne")
except ImportError:
    pytest.skip("nevergrad is not installed", allow_module_level=True)
ng: Any = sys.modules["nevergrad"]


def searcher(seed: int = 3, space: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    """Set up as the Tuner sets it up: param space, then the seed."""
    kwargs.setdefault("optimizer", "OnePlusOne")
    found = NevergradSearch(metric="loss", mode="min", **kwargs)
    assert found.set_search_properties(None, None, dict(space or SPACE))
    found.use_seed(seed)
    return found


def ask(found: Any, trial_id: str) -> dict[str, Any]:
    config = found.suggest(trial_id)
    assert isinstance(config, dict)
    return config


# -- the space ---------------------------------------------------------------------


@pytest.mark.parametrize("optimizer", ["OnePlusOne", "TwoPointsDE", "RandomSearch"])
def test_every_domain_is_searched_within_it_and_keeps_its_type(optimizer: str) -> None:
    found = searcher(space=EVERY_DOMAIN, optimizer=optimizer)
    parameters = parse_space(EVERY_DOMAIN).sampled
    seen_categories = []
    for step in range(30):
        config = ask(found, f"t{step}")
        assert isinstance(config, dict)
        assert config["nested"]["constant"] == "kept"
        for parameter in parameters:
            value = value_at(config, parameter.path)
            assert parameter.domain.is_valid(value), (parameter, value)  # type: ignore[union-attr]
        for name in ("randint", "qrandint", "lograndint", "qlograndint"):
            assert type(config[name]) is int
        assert type(config["uniform"]) is float
        assert config["one_int"] == 3
        seen_categories.append(json.dumps(config["choice"]))
        found.on_trial_complete(f"t{step}", {"loss": float(config["uniform"]) ** 2})
    assert len(set(seen_categories)) > 1
    assert msgspec.json.decode(msgspec.json.encode(seen_categories)) == seen_categories


@pytest.mark.parametrize(
    "domain", [tunecore.grid_search([1, 2]), tunecore.sample_from(lambda _: 1)]
)
def test_a_grid_or_a_function_is_refused_naming_its_path(domain: Any) -> None:
    space = {"opt": {"lr": domain}, "x": tunecore.uniform(0, 1)}
    with pytest.raises(InvalidFieldError, match=r"^param_space\['opt'\]\['lr'\]"):
        NevergradSearch("OnePlusOne", metric="loss", mode="min").set_search_properties(
            None, None, space
        )


def test_a_space_given_to_the_constructor_is_kept() -> None:
    found = NevergradSearch(ng.optimizers.OnePlusOne, space=dict(SPACE), metric="loss", mode="min")
    assert not found.set_search_properties(None, None, {})
    config = ask(found, "a")
    assert config["steps"] == 100
    assert config["activation"] in ("relu", "tanh")


# -- the optimizer, in Ray's forms ---------------------------------------------------


@pytest.mark.parametrize(
    "optimizer",
    ["OnePlusOne", "NGOpt"],
)
def test_the_optimizer_by_class_configured_or_name_suggests_the_same(optimizer: str) -> None:
    """`ng.optimizers.OnePlusOne` is a configured optimizer, `NGOpt` a class."""
    by_name = run(searcher(optimizer=optimizer), 6)
    assert run(searcher(optimizer=ng.optimizers.registry[optimizer]), 6) == by_name


def test_a_parametrization_of_nevergrad_is_searched_as_given_but_has_no_spec() -> None:
    """Ray's docstring: `space=ng.p.Dict(...)` with an optimizer class."""

    def native() -> Any:
        return ng.p.Dict(
            width=ng.p.Scalar(lower=0, upper=20),
            height=ng.p.Scalar(lower=-100, upper=100),
            activation=ng.p.Choice(choices=["relu", "tanh"]),
        )

    answers = []
    for _ in range(2):
        found = NevergradSearch(
            optimizer=ng.optimizers.OnePlusOne,
            space=native(),
            metric="mean_loss",
            mode="min",
            points_to_evaluate=[{"width": 10.0, "height": 0.0, "activation": "relu"}],
        )
        assert not found.set_search_properties(None, None, {})
        found.use_seed(5)
        configs = []
        for step in range(6):
            config = ask(found, f"t{step}")
            found.on_trial_complete(f"t{step}", {"mean_loss": config["width"]})
            configs.append(config)
        answers.append(configs)
        with pytest.warns(UserWarning, match=r"search_alg="):
            assert found.to_spec() is None
        assert found.to_spec() is None  # one warning, not one per call
        with pytest.raises(NotImplementedError):
            found.add_evaluated_point({"width": 1.0}, 1.0)
    assert answers[0] == answers[1]
    assert answers[0][0] == {"width": 10.0, "height": 0.0, "activation": "relu"}
    for config in answers[0]:
        assert 0 <= config["width"] <= 20
        assert config["activation"] in ("relu", "tanh")
    assert msgspec.json.decode(msgspec.json.encode(answers[0])) == answers[0]


def test_an_optimizer_instance_with_parameter_names_as_in_rays_first_form() -> None:
    def instance() -> Any:
        return ng.optimizers.OnePlusOne(ng.p.Array(shape=(2,)), budget=20)

    answers = []
    for _ in range(2):
        found = NevergradSearch(instance(), space=["height", "width"], metric="loss", mode="min")
        found.use_seed(2)
        configs = []
        for step in range(4):
            config = ask(found, f"t{step}")
            found.on_trial_complete(f"t{step}", {"loss": (config["height"] - 1) ** 2})
            configs.append(config)
        answers.append(configs)
        with pytest.warns(UserWarning, match="an optimizer instance"):
            assert found.to_spec() is None
    assert answers[0] == answers[1]
    assert all(set(config) == {"height", "width"} for config in answers[0])
    assert all(type(config["height"]) is float for config in answers[0])


def test_an_optimizer_instance_refuses_kwargs_a_dict_space_or_a_wrong_count() -> None:
    instance = ng.optimizers.OnePlusOne(ng.p.Array(shape=(2,)))
    with pytest.raises(ValueError, match="optimizer_kwargs"):
        NevergradSearch(instance, optimizer_kwargs={"budget": 3})
    with pytest.raises(ValueError, match="list of parameter names"):
        NevergradSearch(instance, space=dict(SPACE))
    with pytest.raises(InvalidFieldError, match=r"^NevergradSearch\.space"):
        NevergradSearch(instance, space=["a", "b", "c"])


def test_an_unregistered_configured_optimizer_runs_but_has_no_spec() -> None:
    configured = ng.families.ParametrizedOnePlusOne(noise_handling="random")
    found = searcher(optimizer=configured)
    run(found, 3)
    with pytest.warns(UserWarning, match="does not name"):
        assert found.to_spec() is None


def test_optimizer_kwargs_reach_the_optimizer() -> None:
    """NGOpt chooses its algorithm by `budget`: another budget, another run."""
    small = run(searcher(optimizer="NGOpt", optimizer_kwargs={"budget": 12}), 12)
    again = run(searcher(optimizer="NGOpt", optimizer_kwargs={"budget": 12}), 12)
    large = run(searcher(optimizer="NGOpt", optimizer_kwargs={"budget": 10_000}), 12)
    assert small == again
    assert large != small
    with pytest.raises(TypeError, match="no_such_option"):
        searcher(optimizer_kwargs={"no_such_option": 1}).suggest("a")


# -- determinism and rebuild ----------------------------------------------------


def test_the_same_seed_gives_the_same_run_and_another_seed_another() -> None:
    first = run(searcher(seed=5), 12)
    assert run(searcher(seed=5), 12) == first
    assert run(searcher(seed=6), 12) != first


@pytest.mark.slow  # a process of its own per run: the `slow` session
def test_the_run_is_the_same_in_another_process() -> None:
    """No hash order or global RNG in it: PYTHONHASHSEED does not matter."""
    script = (
        "import json, numpy\n"
        "from tests.search.test_nevergrad import run, searcher\n"
        "numpy.random.seed(int(__import__('os').environ['PYTHONHASHSEED']))\n"
        "print(json.dumps(run(searcher(seed=5, optimizer='NGOpt'), 8)))\n"
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
    assert outputs[0] == outputs[1] == run(searcher(seed=5, optimizer="NGOpt"), 8)


def test_from_spec_replaying_the_same_asks_and_tells_suggests_what_the_original_does() -> None:
    original = searcher(
        seed=9,
        optimizer="TwoPointsDE",
        optimizer_kwargs={"budget": 40, "num_workers": 2},
        points_to_evaluate=[{"x": 1.0, "activation": "tanh"}],
    )
    spec = original.to_spec()
    assert spec is not None
    assert msgspec.json.decode(msgspec.json.encode(spec)) == spec  # plain JSON
    rebuilt = NevergradSearch.from_spec(spec)
    for found in (original, rebuilt):
        run(found, 6)
        found.suggest("errored")
        found.on_trial_complete("errored", None, error=True)
        found.suggest("early")
        found.on_trial_complete("early", None)  # ended without a result
        found.add_evaluated_point({"x": 3.0, "activation": "tanh", "steps": 100}, 0.0)
    assert original.to_spec() == spec  # it describes the searcher before its first ask
    assert rebuilt.suggest("next") == original.suggest("next")


def test_a_spec_that_is_not_one_to_spec_wrote_is_refused_naming_the_field() -> None:
    spec = searcher().to_spec()
    assert spec is not None
    with pytest.raises(InvalidFieldError, match=r"NevergradSearch\.from_spec.*seed"):
        NevergradSearch.from_spec({**spec, "seed": "high"})


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
def test_it_finds_the_optimum_minimising_or_maximising(mode: str, sign: float) -> None:
    """OnePlusOne, as Ray's example has it: random search gets within 0.01
    of the least loss in 60 trials one time in four."""
    found = NevergradSearch("OnePlusOne", metric="loss", mode=mode)
    found.set_search_properties(None, None, dict(SPACE))
    found.use_seed(2)
    configs = run(found, 60, sign=sign)
    assert loss(min(configs, key=loss)) < 0.01
    # It learnt the choice: random search picks tanh 15 times in 30 on average.
    assert sum(c["activation"] == "tanh" for c in configs[30:]) >= 24


def test_points_evaluated_elsewhere_guide_it() -> None:
    told = searcher()
    fresh = searcher()
    for step in range(20):
        config = {"x": step / 2.0, "activation": "tanh", "steps": 100}
        told.add_evaluated_point(config, loss(config))
    told.add_evaluated_point({"x": 5.0, "activation": "relu"}, 0.0, error=True)
    assert run(told, 5) != run(fresh, 5)


def test_nan_results_and_errors_tell_nothing_and_do_not_break_the_search() -> None:
    found = searcher()
    for step in range(6):
        found.suggest(f"t{step}")
        if step % 2:
            found.on_trial_complete(f"t{step}", {"loss": float("nan")})
        else:
            found.on_trial_complete(f"t{step}", None, error=True)
    assert isinstance(found.suggest("next"), dict)


# -- errors -------------------------------------------------------------------------


def test_without_nevergrad_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nevergrad", None)
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[nevergrad\]'"):
        NevergradSearch("OnePlusOne")


def test_nevergrad_imports_beside_bayesian_optimization_3() -> None:
    """nevergrad <= 1.0.3 asks bayes_opt for a name that version 3 (the
    bayesopt extra's) no longer has; bayes_opt, imported first, stays."""
    script = (
        "import sys, bayes_opt\n"
        "from tunecore.search.nevergrad import NevergradSearch\n"
        "NevergradSearch('OnePlusOne')\n"
        "assert sys.modules['bayes_opt'] is bayes_opt\n"
    )
    subprocess.run(
        [sys.executable, "-c", script], check=True, cwd=Path(__file__).parents[2], env=os.environ
    )


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"optimizer": None}, "NevergradSearch.optimizer"),
        ({"optimizer": "NoSuchOptimizer"}, "NevergradSearch.optimizer"),
        ({"optimizer": "OnePlusOne", "optimizer_kwargs": [1]}, "NevergradSearch.optimizer_kwargs"),
        ({"optimizer": "OnePlusOne", "space": "x"}, "NevergradSearch.space"),
        ({"optimizer": "OnePlusOne", "metric": ["a", "b"]}, "NevergradSearch.metric"),
        ({"optimizer": "OnePlusOne", "mode": "best"}, "NevergradSearch.mode"),
        ({"optimizer": "OnePlusOne", "points_to_evaluate": {"x": 1}}, "NevergradSearch.points"),
    ],
)
def test_a_bad_argument_is_refused_naming_it(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidFieldError, match=f"^{field}"):
        NevergradSearch(**kwargs)


def test_asking_without_a_space_or_a_metric_says_what_is_missing() -> None:
    with pytest.raises(RuntimeError, match="no search space"):
        NevergradSearch("OnePlusOne", metric="loss", mode="min").suggest("a")
    with pytest.raises(RuntimeError, match="no metric and mode"):
        NevergradSearch("OnePlusOne", space=dict(SPACE)).suggest("a")


def test_a_mode_alone_uses_rays_default_metric() -> None:
    assert NevergradSearch("OnePlusOne", space=dict(SPACE), mode="max").metric == "_metric"


def test_a_result_without_the_metric_names_it() -> None:
    found = searcher()
    found.suggest("a")
    with pytest.raises(RuntimeError, match="'loss'"):
        found.on_trial_complete("a", {"score": 1.0})


def test_create_searcher_knows_it() -> None:
    found = create_searcher("nevergrad", optimizer="OnePlusOne", metric="loss", mode="min")
    assert isinstance(found, NevergradSearch)


# -- in an experiment -------------------------------------------------------------


def test_in_an_experiment_a_rebuilt_searcher_repeats_every_logged_suggestion(
    tmp_path: Path,
) -> None:
    searcher = ConcurrencyLimiter(
        NevergradSearch("TwoPointsDE", optimizer_kwargs={"num_workers": 4}), max_concurrent=4
    )
    simulated_asks(searcher, tmp_path / "sim", samples=16, seed=4, iterations=2)
    assert_a_rebuilt_searcher_repeats_every_logged_suggestion(tmp_path / "sim")


def test_a_warm_start_tells_it_every_finished_trial_of_an_earlier_experiment(
    tmp_path: Path,
) -> None:
    def fit(search_alg: object, name: str, samples: int, seed: int) -> list[Any]:
        return simulated_asks(search_alg, tmp_path / name, samples=samples, seed=seed)

    fit(None, "earlier", 12, 1)  # random search
    cold = fit(NevergradSearch("OnePlusOne"), "cold", 3, 2)
    warmed = NevergradSearch("OnePlusOne").warm_start(from_experiment=tmp_path / "earlier")
    assert fit(warmed, "warm", 3, 2) != cold


# -- exact resume, as property tests ------------------------------------------------

test_after_a_crash_anywhere_the_rebuilt_search_suggests_what_the_run_did = crash_anywhere(
    lambda: NevergradSearch("TwoPointsDE", optimizer_kwargs={"num_workers": 4}),
    samples=12,
    examples=8,
)
test_the_same_seed_gives_the_same_log_bytes_with_four_concurrent = same_log_bytes(
    lambda: NevergradSearch("NGOpt"), samples=10
)
test_a_restored_run_continues_with_exactly_the_uninterrupted_runs_suggestions = restore_continues(
    lambda: NevergradSearch("OnePlusOne"), samples=10, crash_after=4
)
