"""`tunecore.search.bayesopt.BayesOptSearch`, Ray Tune's searcher on bayes_opt
3.x, driven as the shell drives it: set up, seeded, asked and told.

A suggestion fits a GP (about 0.1-0.3 s), so runs stay a few steps long.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

pytest.importorskip("bayes_opt")

import tunecore
from tests.search.logged_runs import (
    assert_a_rebuilt_searcher_repeats_every_logged_suggestion,
    simulated_asks,
)
from tunecore.model import InvalidFieldError, JsonDict
from tunecore.search import ConcurrencyLimiter, Searcher
from tunecore.search.bayesopt import BayesOptSearch

SPACE: dict[str, Any] = {
    "x": tunecore.uniform(-5.0, 5.0),
    "nested": {"y": tunecore.uniform(0.0, 3.0)},
    "constant": 7,
}


def loss(config: dict[str, Any]) -> float:
    return float((config["x"] - 1.0) ** 2 + (config["nested"]["y"] - 2.0) ** 2)


def searcher(seed: int = 3, **kwargs: Any) -> BayesOptSearch:
    """Set up as the Tuner sets it up: param space, then the seed."""
    kwargs.setdefault("random_search_steps", 2)
    found = BayesOptSearch(metric="loss", mode="min", **kwargs)
    assert found.set_search_properties(None, None, dict(SPACE))
    found.use_seed(seed)
    return found


def run(
    found: Searcher, steps: int, objective: Callable[[dict[str, Any]], float] = loss
) -> list[Any]:
    """Ask and tell one trial at a time; every answer, in order."""
    answers: list[Any] = []
    for step in range(steps):
        config = found.suggest(f"t{step}")
        answers.append(config)
        if isinstance(config, dict):
            found.on_trial_complete(f"t{step}", {"loss": objective(config)})
    return answers


# -- the space ---------------------------------------------------------------------


def test_a_suggestion_is_a_nested_config_of_plain_floats_within_the_bounds() -> None:
    for config in run(searcher(), 4):
        assert config["constant"] == 7
        assert type(config["x"]) is float
        assert type(config["nested"]["y"]) is float
        assert -5.0 <= config["x"] <= 5.0
        assert 0.0 <= config["nested"]["y"] <= 3.0


def test_rays_native_space_of_bounds_nests_slashed_names() -> None:
    found = BayesOptSearch(
        {"width": (0, 20), "a/b": (-1.0, 1.0)}, metric="loss", mode="min", random_search_steps=1
    )
    assert not found.set_search_properties(None, None, {})  # it keeps its own space
    config = found.suggest("t0")
    assert isinstance(config, dict)
    assert set(config) == {"width", "a"}
    assert 0 <= config["width"] <= 20
    assert -1.0 <= config["a"]["b"] <= 1.0


@pytest.mark.parametrize(
    "domain",
    [
        tunecore.loguniform(1e-4, 1e-1),
        tunecore.quniform(0.0, 1.0, 0.1),
        tunecore.randint(0, 10),
        tunecore.choice([1, 2]),
        tunecore.randn(0.0, 1.0),
        tunecore.grid_search([0.1, 0.2]),
        tunecore.sample_from(lambda _: 0.1),
    ],
)
def test_a_domain_other_than_uniform_is_refused_naming_its_path(domain: Any) -> None:
    found = BayesOptSearch(metric="loss", mode="min")
    space = {"opt": {"lr": domain}, "x": tunecore.uniform(0, 1)}
    with pytest.raises(InvalidFieldError, match=r"^param_space\['opt'\]\['lr'\]"):
        found.set_search_properties(None, None, space)


def test_a_space_with_nothing_to_search_is_refused() -> None:
    with pytest.raises(InvalidFieldError, match=r"tune\.uniform"):
        BayesOptSearch(metric="loss", mode="min").set_search_properties(None, None, {"a": 1})


# -- determinism and rebuild ----------------------------------------------------


def test_the_same_seed_gives_the_same_run_and_another_seed_another() -> None:
    first = run(searcher(seed=5), 5)
    assert run(searcher(seed=5), 5) == first
    assert run(searcher(seed=6), 5) != first


@pytest.mark.slow  # a process of its own per run: the `slow` session
def test_the_run_is_the_same_in_another_process() -> None:
    """No hash order or global RNG in it: PYTHONHASHSEED does not matter."""
    script = (
        "import json\n"
        "from tests.search.test_bayesopt import run, searcher\n"
        "print(json.dumps(run(searcher(seed=5), 4)))\n"
    )
    outputs = []
    for hash_seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            cwd=Path(__file__).parents[2],
        )
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert outputs[0] == outputs[1] == run(searcher(seed=5), 4)


def test_a_random_state_the_user_gives_wins_over_the_experiments_seed() -> None:
    assert run(searcher(seed=5, random_state=42), 3) == run(searcher(seed=6, random_state=42), 3)


def test_rays_default_random_state_gives_way_to_the_experiments_seed() -> None:
    alone = BayesOptSearch(metric="loss", mode="min", random_search_steps=2)
    alone.set_search_properties(None, None, dict(SPACE))  # no use_seed: Ray's 42
    assert run(alone, 2) == run(searcher(seed=42), 2)
    assert run(searcher(seed=7), 2) != run(searcher(seed=42), 2)


def test_from_spec_replaying_the_same_asks_and_tells_suggests_what_the_original_does() -> None:
    original = searcher(seed=9, points_to_evaluate=[{"x": 0.5, "nested": {"y": 1.0}}])
    spec = original.to_spec()
    assert spec is not None
    assert msgspec.json.decode(msgspec.json.encode(spec)) == spec  # plain JSON
    answers = run(original, 4)
    assert original.to_spec() == spec  # it describes the searcher before its first ask
    rebuilt = BayesOptSearch.from_spec(spec)
    assert run(rebuilt, 4) == answers
    assert rebuilt.suggest("next") == original.suggest("next")


def test_registering_without_asking_is_not_an_exact_rebuild() -> None:
    """Why a resume re-asks: bayes_opt's RNG advances on every suggestion."""
    original = searcher(seed=9)
    answers = run(original, 4)
    registered = BayesOptSearch.from_spec(original.to_spec())  # type: ignore[arg-type]
    for config in answers:
        registered.add_evaluated_point(config, loss(config))
    assert registered.suggest("next") != original.suggest("next")


# -- Ray's behaviour ----------------------------------------------------------------


def test_points_to_evaluate_come_first_nested_or_flat() -> None:
    found = searcher(
        points_to_evaluate=[{"x": 0.5, "nested": {"y": 1.0}}, {"x": -1.0, "nested/y": 2.5}],
        random_search_steps=3,
    )
    first, second, third = run(found, 3)
    assert first == {"x": 0.5, "nested": {"y": 1.0}, "constant": 7}
    assert second == {"x": -1.0, "nested": {"y": 2.5}, "constant": 7}
    assert third not in (first, second)


def test_a_point_outside_the_space_is_refused_naming_it() -> None:
    with pytest.raises(InvalidFieldError, match=r"points_to_evaluate\[1\]\['nested'\]\['y'\]"):
        searcher(
            points_to_evaluate=[{"x": 0.5, "nested": {"y": 1.0}}, {"x": 0.0, "nested": {"y": 9}}]
        )
    with pytest.raises(InvalidFieldError, match=r"points_to_evaluate\[0\]\['x'\]"):
        searcher(points_to_evaluate=[{"nested": {"y": 1.0}}])


def test_after_its_random_steps_it_waits_for_their_results() -> None:
    found = searcher(random_search_steps=2)
    first, second = found.suggest("a"), found.suggest("b")
    assert isinstance(first, dict)
    assert isinstance(second, dict)
    assert found.suggest("c") is None  # both random points are still running
    found.on_trial_complete("a", {"loss": loss(first)})
    assert found.suggest("c") is None
    found.on_trial_complete("b", {"loss": loss(second)})
    assert isinstance(found.suggest("c"), dict)


def test_a_duplicate_is_skipped_and_too_many_end_the_search() -> None:
    point = {"x": 0.5, "nested": {"y": 1.0}}
    found = searcher(points_to_evaluate=[point] * 3, patience=2, random_search_steps=0)
    assert isinstance(found.suggest("a"), dict)
    assert found.suggest("b") is None  # skip_duplicate
    assert found.suggest("c") == Searcher.FINISHED  # a third time: more than patience
    again = searcher(points_to_evaluate=[point] * 2, skip_duplicate=False, random_search_steps=0)
    assert again.suggest("a") == again.suggest("b")


def test_repeat_float_precision_sets_the_decimals_two_configs_must_share_to_be_one() -> None:
    """Ray 2.60's keyword: configs are compared as their floats formatted
    to that many decimals (default 5), and a skipped duplicate is None."""
    points = [{"x": 0.123451, "nested": {"y": 1.0}}, {"x": 0.123449, "nested": {"y": 1.0}}]
    default = searcher(points_to_evaluate=[dict(point) for point in points])
    assert isinstance(default.suggest("t0"), dict)
    assert default.suggest("t1") is None  # 0.12345 both, to 5 decimals
    finer = searcher(points_to_evaluate=points, repeat_float_precision=6)
    assert [finer.suggest(f"t{i}")["x"] for i in range(2)] == [0.123451, 0.123449]  # type: ignore[index]
    rebuilt = BayesOptSearch.from_spec(finer.to_spec() or {})
    assert rebuilt._repeat_float_precision == 6
    with pytest.raises(TypeError, match="repeat_float_precision must be an integer"):
        BayesOptSearch(repeat_float_precision=True)
    with pytest.raises(InvalidFieldError, match="repeat_float_precision"):
        BayesOptSearch(repeat_float_precision=-1)


def test_mode_sets_the_sign_bayes_opt_maximises_and_bad_values_are_left_out() -> None:
    for mode, sign in (("min", -1.0), ("max", 1.0)):
        found = BayesOptSearch(metric="loss", mode=mode, random_search_steps=0)
        found.set_search_properties(None, None, dict(SPACE))
        for step, value in enumerate([2.0, math.nan, math.inf]):
            config = found.suggest(f"t{step}")
            found.on_trial_complete(f"t{step}", {"loss": value})
            assert isinstance(config, dict)
        assert found.optimizer is not None
        assert [r["target"] for r in found.optimizer.res] == [sign * 2.0]


def test_an_errored_trial_tells_the_gp_nothing() -> None:
    found = searcher(random_search_steps=0)
    found.suggest("a")
    found.on_trial_complete("a", None, error=True)
    assert found.optimizer is not None
    assert found.optimizer.res == []


def test_utility_kwargs_map_onto_bayes_opt_3_acquisition_functions() -> None:
    from bayes_opt import acquisition  # noqa: PLC0415

    cases = [
        ({"kind": "ucb", "kappa": 2.5, "xi": 0.0}, acquisition.UpperConfidenceBound, "kappa", 2.5),
        ({"kind": "ei", "xi": 0.1}, acquisition.ExpectedImprovement, "xi", 0.1),
        ({"kind": "poi", "xi": 0.2}, acquisition.ProbabilityOfImprovement, "xi", 0.2),
    ]
    for utility, kind, name, value in cases:
        found = searcher(utility_kwargs=utility)
        found.suggest("a")
        assert found.optimizer is not None
        function = found.optimizer.acquisition_function  # type: ignore[attr-defined]
        assert isinstance(function, kind)
        assert getattr(function, name) == value


def test_a_point_evaluated_elsewhere_is_registered() -> None:
    found = searcher()
    found.add_evaluated_point({"x": 1.0, "nested": {"y": 2.0}, "constant": 7}, 0.25)
    found.add_evaluated_point({"x": 2.0, "nested": {"y": 2.0}}, 1.0, error=True)
    assert found.optimizer is not None
    assert found.optimizer.res == [{"target": -0.25, "params": {"x": 1.0, "nested/y": 2.0}}]


def test_an_analysis_of_an_earlier_run_is_registered_and_kept_in_the_spec() -> None:
    import pandas  # noqa: PLC0415

    @dataclasses.dataclass
    class Analysis:
        """What Ray's register_analysis reads of an ExperimentAnalysis."""

        def get_all_configs(self) -> dict[str, JsonDict]:
            return {"a": {"x": 1.0, "nested": {"y": 2.0}}, "b": {"x": 0.0, "nested": {"y": 0.0}}}

        def dataframe(self, metric: str, mode: str) -> pandas.DataFrame:
            return pandas.DataFrame({"trial_id": ["a", "b"], "loss": [0.0, 5.0]})

    found = searcher(analysis=Analysis())
    spec = found.to_spec()
    assert spec is not None
    found.suggest("a")
    assert found.optimizer is not None
    assert sorted(r["target"] for r in found.optimizer.res) == [-5.0, 0.0]
    rebuilt = BayesOptSearch.from_spec(spec)
    rebuilt.suggest("a")
    assert rebuilt.optimizer is not None
    assert rebuilt.optimizer.res == found.optimizer.res


# -- errors -------------------------------------------------------------------------


def test_without_bayes_opt_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bayes_opt", None)
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[bayesopt\]'"):
        BayesOptSearch()


def test_bayes_opt_1_which_ray_tune_needs_is_refused_when_built_naming_the_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bayes_opt 1.x has no acquisition module; seen with bayesian-optimization
    # 1.4.0 in a Ray Tune 2.60 environment (docs/ray-examples.md row 425).
    monkeypatch.setitem(sys.modules, "bayes_opt.acquisition", None)
    monkeypatch.setattr(
        importlib.metadata, "version", lambda name: {"bayesian-optimization": "1.4.0"}[name]
    )
    with pytest.raises(
        ImportError, match=r"found 1\.4\.0: 1\.x.*pip install 'tunecore\[bayesopt\]'"
    ):
        BayesOptSearch(utility_kwargs={"kind": "ucb", "kappa": 2.5, "xi": 0.0})


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"patience": 0}, "BayesOptSearch.patience"),
        ({"random_search_steps": -1}, "BayesOptSearch.random_search_steps"),
        ({"random_state": "7"}, "BayesOptSearch.random_state"),
        ({"skip_duplicate": "yes"}, "BayesOptSearch.skip_duplicate"),
        ({"utility_kwargs": {"kind": "lcb"}}, r"BayesOptSearch.utility_kwargs\['kind'\]"),
        ({"utility_kwargs": {"kappa": -1}}, r"BayesOptSearch.utility_kwargs\['kappa'\]"),
        ({"utility_kwargs": {"beta": 1}}, r"BayesOptSearch.utility_kwargs\['beta'\]"),
        ({"metric": ["a", "b"], "mode": ["min", "max"]}, "BayesOptSearch.metric"),
        ({"mode": "best"}, "BayesOptSearch.mode"),
        ({"space": {"x": (1, 0)}}, r"BayesOptSearch.space\['x'\]"),
        ({"points_to_evaluate": {"x": 1}}, "BayesOptSearch.points_to_evaluate"),
    ],
)
def test_a_bad_argument_is_refused_naming_it(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidFieldError, match=f"^{field}"):
        BayesOptSearch(**kwargs)


def test_asking_without_a_space_or_a_metric_says_what_is_missing() -> None:
    with pytest.raises(RuntimeError, match="no search space"):
        BayesOptSearch(metric="loss", mode="min").suggest("a")
    with pytest.raises(RuntimeError, match="no metric and mode"):
        BayesOptSearch({"x": (0, 1)}).suggest("a")


def test_a_result_without_the_metric_names_it() -> None:
    found = searcher(random_search_steps=0)
    found.suggest("a")
    with pytest.raises(RuntimeError, match="'loss'"):
        found.on_trial_complete("a", {"score": 1.0})


# -- in an experiment -------------------------------------------------------------


def simulated_loss(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    return {"loss": loss(config)}, 1.0


def test_in_an_experiment_a_rebuilt_searcher_repeats_every_logged_suggestion(
    tmp_path: Path,
) -> None:
    searcher = ConcurrencyLimiter(BayesOptSearch(random_search_steps=2), max_concurrent=2)
    simulated_asks(
        searcher, tmp_path / "sim", samples=5, seed=4, space=SPACE, trainable=simulated_loss
    )
    assert_a_rebuilt_searcher_repeats_every_logged_suggestion(tmp_path / "sim")


def test_a_warm_start_registers_every_finished_trial_of_an_earlier_experiment(
    tmp_path: Path,
) -> None:
    def fit(search_alg: object, name: str, samples: int) -> None:
        simulated_asks(
            search_alg,
            tmp_path / name,
            samples=samples,
            seed=3,
            space=SPACE,
            trainable=simulated_loss,
        )

    fit(None, "earlier", 4)  # random search
    earlier = tunecore.ExperimentAnalysis(str(tmp_path / "earlier"))
    warmed = BayesOptSearch(random_search_steps=1).warm_start(from_experiment=tmp_path / "earlier")
    fit(warmed, "warm", 1)
    assert warmed.optimizer is not None
    registered = [-float(r["target"]) for r in warmed.optimizer.res]
    losses = [float(r["loss"]) for r in earlier.results.values()]  # type: ignore[arg-type]
    assert len(losses) == 4
    assert registered[:4] == losses  # before its own first suggestion, in the earlier order
    assert len(registered) == 5  # and then its own trial


def test_a_spec_that_is_not_one_to_spec_wrote_is_refused_naming_the_field() -> None:
    spec = searcher().to_spec()
    assert spec is not None
    with pytest.raises(InvalidFieldError, match=r"BayesOptSearch\.from_spec.*patience"):
        BayesOptSearch.from_spec({**spec, "patience": "five"})
