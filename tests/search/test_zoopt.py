"""`tunecore.search.zoopt.ZOOptSearch`, Ray Tune's ZOOpt searcher, driven
as the shell drives it: set up, seeded, asked and told."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

pytest.importorskip("zoopt")

import tunecore
from tests.search.flat_space import SPACE, loss, run, value_at
from tests.search.logged_runs import (
    assert_a_rebuilt_searcher_repeats_every_logged_suggestion,
    simulated_asks,
)
from tests.search.resume_properties import crash_anywhere, restore_continues, same_log_bytes
from tunecore import RunConfig, TuneConfig
from tunecore.core.search import parse_space
from tunecore.model import InvalidFieldError
from tunecore.search import ConcurrencyLimiter, Searcher, create_searcher
from tunecore.search.zoopt import ZOOptSearch

ZOOPT_DOMAINS: dict[str, Any] = {
    "uniform": tunecore.uniform(-5.0, 5.0),
    "quniform": tunecore.quniform(0.0, 0.3, 0.1),
    "randint": tunecore.randint(0, 4),
    "qrandint": tunecore.qrandint(1, 20, 5),
    "choice": tunecore.choice(["relu", {"kind": "tanh"}, [1, 2], 3, True]),
    "one_int": tunecore.randint(3, 4),
    "nested": {"x": tunecore.uniform(0.0, 1.0), "constant": "kept"},
}


def searcher(
    experiment_seed: int = 3, space: dict[str, Any] | None = None, **kwargs: Any
) -> ZOOptSearch:
    """Set up as the Tuner sets it up: param space, then the seed."""
    kwargs.setdefault("budget", 40)
    found = ZOOptSearch(metric="loss", mode="min", **kwargs)
    assert found.set_search_properties(None, None, dict(space or SPACE))
    found.use_seed(experiment_seed)
    return found


def test_every_domain_it_models_is_searched_within_it_and_keeps_its_type() -> None:
    found = searcher(space=ZOOPT_DOMAINS)
    parameters = parse_space(ZOOPT_DOMAINS).sampled
    for step in range(30):
        config = found.suggest(f"t{step}")
        assert isinstance(config, dict)
        assert config["nested"]["constant"] == "kept"
        for parameter in parameters:
            value = value_at(config, parameter.path)
            assert parameter.domain.is_valid(value), (parameter, value)  # type: ignore[union-attr]
        assert type(config["randint"]) is int
        assert type(config["qrandint"]) is int
        assert config["one_int"] == 3
        found.on_trial_complete(f"t{step}", {"loss": float(config["uniform"]) ** 2})
        assert msgspec.json.decode(msgspec.json.encode(config)) == config


@pytest.mark.parametrize(
    "domain",
    [
        tunecore.grid_search([1, 2]),
        tunecore.sample_from(lambda _: 1),
        tunecore.loguniform(1e-3, 1),
        tunecore.randn(0, 1),
    ],
)
def test_what_zoopt_cannot_model_is_refused_naming_its_path(domain: Any) -> None:
    space = {"opt": {"lr": domain}, "x": tunecore.uniform(0, 1)}
    with pytest.raises(InvalidFieldError, match=r"^param_space\['opt'\]\['lr'\]"):
        ZOOptSearch(budget=5, metric="loss", mode="min").set_search_properties(None, None, space)


def test_a_dim_dict_of_zoopt_tuples_is_searched_as_given_but_has_no_spec() -> None:
    from zoopt import ValueType  # noqa: PLC0415

    dim_dict = {
        "height": (ValueType.CONTINUOUS, [-10, 10], 1e-2),
        "width": (ValueType.DISCRETE, [-10, 10], False),
    }
    answers = []
    for _ in range(2):
        found = ZOOptSearch(budget=10, dim_dict=dim_dict, metric="mean_loss", mode="min")
        assert not found.set_search_properties(None, None, {})
        found.use_seed(4)
        configs = []
        for step in range(8):
            config = found.suggest(f"t{step}")
            assert isinstance(config, dict)
            found.on_trial_complete(f"t{step}", {"mean_loss": (config["height"] - 3) ** 2})
            configs.append(config)
        answers.append(configs)
        with pytest.warns(UserWarning, match=r"search_alg="):
            assert found.to_spec() is None
    assert answers[0] == answers[1]
    for config in answers[0]:
        assert -10 <= config["height"] <= 10
        assert type(config["width"]) is int


def test_the_same_seed_gives_the_same_run_whatever_else_uses_numpys_global_state() -> None:
    first = run(searcher(experiment_seed=5), 25)
    np.random.seed(123)
    assert run(searcher(experiment_seed=5), 25) == first
    assert run(searcher(experiment_seed=6), 25) != first


def test_a_seed_the_user_gives_wins_over_the_experiments() -> None:
    given = run(searcher(5, None, seed=11), 6)
    assert run(searcher(6, None, seed=11), 6) == given


def test_from_spec_replaying_the_same_asks_and_tells_suggests_what_the_original_does() -> None:
    original = searcher(experiment_seed=9, points_to_evaluate=[{"x": 1.0, "activation": "tanh"}])
    spec = original.to_spec()
    assert spec is not None
    assert msgspec.json.decode(msgspec.json.encode(spec)) == spec
    rebuilt = ZOOptSearch.from_spec(spec)
    for found in (original, rebuilt):
        run(found, 12)
        found.suggest("errored")
        found.on_trial_complete("errored", None, error=True)
    assert original.to_spec() == spec
    assert rebuilt.suggest("next") == original.suggest("next")


def test_points_to_evaluate_come_first() -> None:
    first, second = run(searcher(points_to_evaluate=[{"x": 1.0, "activation": "tanh"}]), 2)
    assert first == {"x": 1.0, "activation": "tanh", "steps": 100}
    assert second != first


@pytest.mark.parametrize(("mode", "sign"), [("min", 1.0), ("max", -1.0)])
def test_it_finds_the_optimum_minimising_or_maximising(mode: str, sign: float) -> None:
    found = ZOOptSearch(budget=60, metric="loss", mode=mode)
    found.set_search_properties(None, None, dict(SPACE))
    found.use_seed(2)
    configs = run(found, 60, sign=sign)
    assert loss(min(configs, key=loss)) < 0.01


def test_one_trial_at_a_time_never_stalls_and_failures_count_as_worst() -> None:
    """ZOOpt waits for its initial samples once: asked one at a time, after
    the last completed, it would wait forever; a failed trial is told."""
    found = searcher(budget=20)
    for step in range(20):
        config = found.suggest(f"t{step}")
        assert isinstance(config, dict), (step, config)
        if step % 3 == 0:
            found.on_trial_complete(f"t{step}", None, error=True)
        elif step % 3 == 1:
            found.on_trial_complete(f"t{step}", {"loss": float("nan")})
        else:
            found.on_trial_complete(f"t{step}", {"loss": loss(config)})


EXAMPLE_SPACE: dict[str, Any] = {  # Ray's zoopt_example.py
    "steps": 10,
    "height": tunecore.quniform(-10, 10, 1e-2),
    "width": tunecore.randint(0, 10),
}
DISCRETE_SPACE: dict[str, Any] = {
    "a": tunecore.randint(0, 10),
    "b": tunecore.choice(["x", "y", "z"]),
}


def example_loss(config: dict[str, Any]) -> float:
    return float((0.1 + config["width"] * 9 / 100) ** (-1) + config.get("height", 0.0) * 0.1)


def discrete_loss(config: dict[str, Any]) -> float:
    return float((config["a"] - 3) ** 2 + (config["b"] == "y"))


@pytest.mark.parametrize("parallel_num", [1, 4])
@pytest.mark.parametrize(
    ("space", "space_loss"), [(EXAMPLE_SPACE, example_loss), (DISCRETE_SPACE, discrete_loss)]
)
def test_it_suggests_its_budget_where_zoopts_model_finds_no_new_point(
    space: dict[str, Any], space_loss: Any, parallel_num: int
) -> None:
    """ZOOpt's model gives up after 100 draws of points it has tried
    ("FINISHED", or None and a trial counted that it never handed out):
    with these spaces, within a few trials for most seeds. The searcher
    asks again, and the run gets its budget."""
    for seed in range(8):
        found = searcher(seed, space, budget=30, parallel_num=parallel_num)
        out: list[tuple[str, Any]] = []
        for step in range(30):
            config = found.suggest(f"t{step}")
            while config is None and out:  # ZOOpt waits: the oldest completes
                trial_id, done = out.pop(0)
                found.on_trial_complete(trial_id, {"loss": space_loss(done)})
                config = found.suggest(f"t{step}")
            assert isinstance(config, dict), (seed, step, config)
            out.append((f"t{step}", config))
            if len(out) == parallel_num:
                trial_id, done = out.pop(0)
                found.on_trial_complete(trial_id, {"loss": space_loss(done)})


def test_another_zoopt_search_built_in_the_process_changes_nothing() -> None:
    """ZOOpt keeps its space's float precisions process-wide: a searcher
    built since, over one dimension, made this one index past them."""
    three = {name: tunecore.uniform(0.0, 1.0) for name in "abc"}

    def ask_and_tell(found: ZOOptSearch, step: int) -> Any:
        config = found.suggest(f"t{step}")
        assert isinstance(config, dict)
        found.on_trial_complete(f"t{step}", {"loss": float(sum(config.values()))})
        return config

    alone = searcher(1, three, budget=20)
    expected = [ask_and_tell(alone, step) for step in range(15)]
    first = searcher(1, three, budget=20)
    other = searcher(2, {"n": tunecore.randint(0, 5)}, budget=20)
    answers = []
    for step in range(15):
        answers.append(ask_and_tell(first, step))
        ask_and_tell(other, step)
    assert answers == expected


def test_a_space_it_has_wholly_tried_finishes_the_search() -> None:
    found = searcher(space={"b": tunecore.choice(["x", "y"])}, budget=10)
    assert [found.suggest(f"t{step}") for step in range(3)][2] == Searcher.FINISHED


def test_one_trial_at_a_time_an_experiment_runs_num_samples_trials(tmp_path: Path) -> None:
    grid = tunecore.simulate(
        lambda config, iteration: ({"mean_loss": example_loss(config)}, 1.0 + iteration),
        param_space=EXAMPLE_SPACE,
        tune_config=TuneConfig(
            search_alg=ConcurrencyLimiter(ZOOptSearch(budget=20), 1),
            metric="mean_loss",
            mode="min",
            num_samples=20,
            seed=3,  # Ray's sequence ends at the fifth trial
        ),
        run_config=RunConfig(storage_path=str(tmp_path), name="sim", verbose=0),
        max_iterations=1,
    )
    assert len(grid) == 20
    assert not grid.errors


def test_parallel_num_bounds_the_trials_out_at_once() -> None:
    found = searcher(budget=10, parallel_num=2)
    answers = [found.suggest(f"t{step}") for step in range(12)]
    assert any(answer is None for answer in answers)


def test_without_zoopt_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "zoopt", None)
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[zoopt\]'"):
        ZOOptSearch(budget=3)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({}, "ZOOptSearch.budget"),
        ({"budget": 0}, "ZOOptSearch.budget"),
        ({"budget": 5, "algo": "bayes"}, "ZOOptSearch.algo"),
        ({"budget": 5, "parallel_num": 0}, "ZOOptSearch.parallel_num"),
        ({"budget": 5, "no_such_option": 1}, "ZOOptSearch.no_such_option"),
        ({"budget": 5, "mode": "best"}, "ZOOptSearch.mode"),
        ({"budget": 5, "seed": 1.5}, "ZOOptSearch.seed"),
    ],
)
def test_a_bad_argument_is_refused_naming_it(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidFieldError, match=f"^{field}"):
        ZOOptSearch(**kwargs)


def test_asking_without_a_space_or_a_metric_says_what_is_missing() -> None:
    with pytest.raises(RuntimeError, match="no search space"):
        ZOOptSearch(budget=5, metric="loss", mode="min").suggest("a")
    with pytest.raises(RuntimeError, match="no metric and mode"):
        ZOOptSearch(budget=5, dim_dict=dict(SPACE)).suggest("a")


def test_create_searcher_knows_it() -> None:
    found: Searcher = create_searcher("zoopt", budget=4, metric="loss", mode="min")
    assert isinstance(found, ZOOptSearch)


def test_in_an_experiment_a_rebuilt_searcher_repeats_every_logged_suggestion(
    tmp_path: Path,
) -> None:
    searcher = ConcurrencyLimiter(ZOOptSearch(budget=16, parallel_num=4), 4)
    simulated_asks(searcher, tmp_path / "sim", samples=16, seed=4, iterations=2)
    assert_a_rebuilt_searcher_repeats_every_logged_suggestion(tmp_path / "sim")


# -- exact resume, as property tests ------------------------------------------------

test_after_a_crash_anywhere_the_rebuilt_search_suggests_what_the_run_did = crash_anywhere(
    lambda: ZOOptSearch(budget=12, parallel_num=4), samples=12, examples=8
)
test_the_same_seed_gives_the_same_log_bytes_with_four_concurrent = same_log_bytes(
    lambda: ZOOptSearch(budget=10, parallel_num=4), samples=10
)
test_a_restored_run_continues_with_exactly_the_uninterrupted_runs_suggestions = restore_continues(
    lambda: ZOOptSearch(budget=10), samples=10, crash_after=4
)
