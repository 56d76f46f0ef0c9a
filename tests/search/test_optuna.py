"""OptunaSearch driven directly, as the shell drives it, and in experiments.

The shell tells a searcher results and asks it for configs in the order the
event log fixes; a resume builds a fresh one from `to_spec()` and replays
the same asks and tells. Most tests do that by hand, without a Tuner; the
last ones run it under `simulate` and `Tuner`, crash and resume.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import math
import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("optuna")

import optuna

import tunecore
import tunecore as tune
from tests.crashes import Crash, CrashAfterTrials
from tests.search.logged_runs import assert_a_rebuilt_searcher_repeats_every_logged_suggestion
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.api.searching import SearcherNotGivenError
from tunecore.core.search.domains import (
    Choice,
    QLogRandInt,
    QRandInt,
    SamplingDomain,
)
from tunecore.model import Asked, InvalidFieldError, JsonDict
from tunecore.search import ConcurrencyLimiter
from tunecore.search.optuna import OptunaSearch
from tunecore.shell.eventlog import read_log
from tunecore.shell.searchers import SearchResumeWarning

optuna.logging.set_verbosity(optuna.logging.WARNING)

SPACE: dict[str, Any] = {
    "steps": 100,
    "width": tune.uniform(0, 20),
    "height": tune.uniform(-100, 100),
    "activation": tune.choice(["relu", "tanh"]),
    "model": {"layers": tune.randint(1, 5), "lr": tune.loguniform(1e-4, 1e-1)},
}

Op = tuple[str, str, Any]


def loss(config: dict[str, Any]) -> float:
    boost = 10.0 if config["activation"] == "relu" else 0.0
    return float((config["width"] - 3) ** 2 + config["height"] * 0.1 + boost)


def results(config: dict[str, Any]) -> dict[str, Any]:
    value = loss(config)
    return {"loss": value, "gain": -value * config["width"], "training_iteration": 1}


def searcher(**kwargs: Any) -> OptunaSearch:
    """An OptunaSearch set up as the Tuner sets it up: the param space
    through set_search_properties, then the experiment's seed."""
    made = OptunaSearch(**{"metric": "loss", "mode": "min", **kwargs})
    if "space" not in kwargs:
        assert made.set_search_properties(None, None, SPACE)
    made.use_seed(2026)
    return made


def run(search: OptunaSearch, asks: int, start: int = 0, pending: int = 3) -> list[Op]:
    """Ask `asks` times, keeping up to `pending` trials running and telling
    the two oldest when the bound is reached (out-of-order completion)."""
    log: list[Op] = []
    running: list[str] = []
    for index in range(start, start + asks):
        trial_id = f"t{index}"
        config = search.suggest(trial_id)
        log.append(("ask", trial_id, config))
        running.append(trial_id)
        if len(running) >= pending:
            for done in (running.pop(1), running.pop(0)):
                config_done = next(c for op, t, c in log if op == "ask" and t == done)
                result = results(config_done)
                search.on_trial_complete(done, result)
                log.append(("tell", done, result))
    return log


def replay(search: OptunaSearch, log: list[Op]) -> None:
    """What a resume does: the logged asks (each must give the logged
    config) and tells, in log order."""
    for op, trial_id, payload in log:
        if op == "ask":
            assert search.suggest(trial_id) == payload, trial_id
        else:
            search.on_trial_complete(trial_id, payload)


def rebuilt(spec: dict[str, Any] | None) -> OptunaSearch:
    assert spec is not None
    fresh = OptunaSearch.from_spec(json.loads(json.dumps(spec)))
    fresh.set_search_properties(None, None, SPACE)
    fresh.use_seed(1)  # a resume passes the seed again; a seeded searcher ignores it
    return fresh


class Recorder(optuna.samplers.RandomSampler):
    """A user's sampler that records what the study tells it."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.finished: list[tuple[str, Any, dict[int, float], dict[str, Any]]] = []
        self.directions: list[Any] = []

    def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
        self.directions = list(study.directions)
        self.finished.append(
            (state.name, values, dict(trial.intermediate_values), dict(trial.user_attrs))
        )


@pytest.fixture
def no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# -- space conversion -----------------------------------------------------------------------------

DOMAINS: dict[str, SamplingDomain] = {
    "uniform": tune.uniform(-2.5, 7.0),
    "quniform": tune.quniform(-1.0, 2.0, 0.25),
    "loguniform": tune.loguniform(1e-5, 1e-1),
    "qloguniform": tune.qloguniform(1e-3, 1.0, 1e-3),
    "randint": tune.randint(-3, 4),
    "qrandint": tune.qrandint(1, 22, 5),
    "lograndint": tune.lograndint(1, 1000),
    "qlograndint": tune.qlograndint(2, 64, 4),
    "choice": tune.choice(["relu", "tanh", 3, None, 0.5]),
    "choice_of_json": tune.choice([[1, 2], {"a": 1}, 1, True]),
}


@pytest.mark.parametrize("name", list(DOMAINS))
def test_every_domain_converts_and_its_suggestions_lie_in_it(name: str) -> None:
    domain = DOMAINS[name]
    search = OptunaSearch(
        {"nested": {"x": domain}},
        metric="loss",
        mode="min",
        sampler=_tpe(seed=1, n_startup_trials=5),
    )
    seen = []
    for index in range(25):
        config = search.suggest(f"t{index}")
        assert config is not None
        assert isinstance(config, dict)
        value = config["nested"]["x"]
        assert domain.is_valid(value), (name, value)
        assert json.loads(json.dumps(config)) == config  # plain JSON, nothing numpy
        assert type(value) in (int, float, str, bool, list, dict, type(None))
        seen.append(value)
        search.on_trial_complete(f"t{index}", {"loss": float(index % 7)})
    if name.startswith("choice"):
        assert isinstance(domain, Choice)
        categories = domain.categories
        assert all(any(s == c and type(s) is type(c) for s in seen) for c in categories)
    if name == "randint":
        assert 4 not in seen  # high is exclusive, as in Ray
    if isinstance(domain, QRandInt | QLogRandInt):
        assert all(value % domain.q == 0 for value in seen)


def test_the_integer_and_float_domains_keep_their_types() -> None:
    search = searcher(space=DOMAINS)
    config = search.suggest("t0")
    assert isinstance(config, dict)
    for name in ("uniform", "quniform", "loguniform", "qloguniform"):
        assert type(config[name]) is float, name
    for name in ("randint", "qrandint", "lograndint", "qlograndint"):
        assert type(config[name]) is int, name


@pytest.mark.parametrize(
    ("space", "where"),
    [
        ({"x": tune.randn(0, 1)}, "param_space['x']"),
        ({"a": {"x": tune.qrandn(0, 1, 0.5)}}, "param_space['a']['x']"),
        ({"x": tune.grid_search([1, 2])}, "param_space['x']"),
        ({"x": tune.sample_from(lambda spec: 1)}, "param_space['x']"),
        ({"layers": [tune.uniform(0, 1)]}, "param_space['layers'][0]"),
    ],
)
def test_a_domain_optuna_cannot_sample_is_refused_naming_its_path(
    space: dict[str, Any], where: str
) -> None:
    search = OptunaSearch(metric="loss", mode="min")
    with pytest.raises(InvalidFieldError) as caught:
        search.set_search_properties(None, None, space)
    assert caught.value.field == where


def test_convert_search_space_gives_the_optuna_distributions_as_in_ray() -> None:
    converted = OptunaSearch.convert_search_space(
        {"a": tune.uniform(6, 8), "b": {"c": tune.randint(1, 4)}, "steps": 3}
    )
    assert converted == {
        "a": optuna.distributions.FloatDistribution(6.0, 8.0),
        "b/c": optuna.distributions.IntDistribution(1, 3),
    }


def test_a_space_of_optuna_distributions_is_searched_as_given() -> None:
    space = {
        "a": optuna.distributions.FloatDistribution(6, 8),
        "b": {"c": optuna.distributions.IntDistribution(1, 3)},
    }
    search = searcher(space=space)
    for index in range(5):
        config = search.suggest(f"t{index}")
        assert isinstance(config, dict)
        assert 6 <= config["a"] <= 8
        assert config["b"]["c"] in (1, 2, 3)
        search.on_trial_complete(f"t{index}", {"loss": config["a"]})
    # The searcher has its own space: the Tuner's is not taken (Ray's contract).
    assert search.set_search_properties("loss", "min", {"x": tune.uniform(0, 1)}) is False


def test_a_space_of_something_else_is_refused_naming_it() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        OptunaSearch({"a": {"b": "not a distribution"}}, metric="loss", mode="min")
    assert caught.value.field == "OptunaSearch.space['a']['b']"
    with pytest.raises(InvalidFieldError, match=r"OptunaSearch\.space"):
        OptunaSearch([("a", 1)], metric="loss", mode="min")  # type: ignore[arg-type]


# -- determinism and exact rebuild ----------------------------------------------------------------


def test_the_same_seed_gives_the_same_suggestions() -> None:
    first, second = run(searcher(), 30), run(searcher(), 30)
    assert first == second
    other = OptunaSearch(metric="loss", mode="min")
    other.set_search_properties(None, None, SPACE)
    other.use_seed(7)
    assert run(other, 30) != first


def test_the_same_seed_gives_the_same_suggestions_in_another_process() -> None:
    script = (
        "import json, optuna, tunecore as tune\n"
        "from tests.search.test_optuna import run, searcher\n"
        "optuna.logging.set_verbosity(optuna.logging.WARNING)\n"
        "print(json.dumps(run(searcher(), 15)))\n"
    )
    here = json.loads(json.dumps(run(searcher(), 15)))
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    for hash_seed in ("1", "2"):
        path = os.pathsep.join([root, os.path.join(root, "src")])
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": path}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        assert json.loads(done.stdout) == here


def _nsga(**kwargs: Any) -> Any:
    return optuna.samplers.NSGAIISampler(population_size=6, **kwargs)


def _tpe(**kwargs: Any) -> Any:
    return optuna.samplers.TPESampler(**kwargs)


REBUILDS: dict[str, Callable[[], OptunaSearch]] = {
    "default TPE": searcher,
    "TPE with a seed": lambda: searcher(seed=11),
    "TPE, two objectives": lambda: searcher(metric=["loss", "gain"], mode=["min", "max"]),
    "points to evaluate": lambda: searcher(points_to_evaluate=[{"width": 3.0}]),
}


@pytest.mark.parametrize("steps", [0, 5, 30])
@pytest.mark.parametrize("kind", list(REBUILDS))
def test_a_searcher_rebuilt_from_its_spec_and_the_log_continues_exactly(
    kind: str, steps: int
) -> None:
    original = REBUILDS[kind]()
    spec = original.to_spec()
    log = run(original, steps)
    assert original.to_spec() == spec  # what it was built from, not what it became
    following = original.suggest("next")

    fresh = rebuilt(spec)
    replay(fresh, log)
    assert fresh.suggest("next") == following


DISCRETE: dict[str, Any] = {"a": tune.choice(["p", "q", "r", "s"]), "b": tune.randint(0, 8)}
NUMERIC: dict[str, Any] = {"x": tune.uniform(-3, 3), "y": tune.uniform(0, 1)}
TWO = {"metric": ["loss", "gain"], "mode": ["min", "max"]}


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# Every sampler Optuna ships, seeded, with a space and objectives it takes.
BUILT_IN: list[Any] = [
    pytest.param(lambda: _tpe(seed=5, multivariate=True), SPACE, {}, id="tpe"),
    pytest.param(lambda: optuna.samplers.RandomSampler(seed=3), SPACE, {}, id="random"),
    pytest.param(lambda: _nsga(seed=7), SPACE, TWO, id="nsga-ii"),
    pytest.param(
        lambda: optuna.samplers.NSGAIIISampler(population_size=6, seed=7), SPACE, TWO, id="nsga-iii"
    ),
    pytest.param(lambda: optuna.samplers.QMCSampler(seed=4), NUMERIC, {}, id="qmc"),
    pytest.param(
        lambda: optuna.samplers.CmaEsSampler(seed=2, sigma0=2.0, n_startup_trials=3),
        NUMERIC,
        {},
        id="cmaes",
        marks=pytest.mark.skipif(not _has("cmaes"), reason="CmaEsSampler needs cmaes"),
    ),
    pytest.param(
        lambda: optuna.samplers.GPSampler(seed=3, n_startup_trials=4),
        NUMERIC,
        {},
        id="gp",
        marks=pytest.mark.skipif(not _has("torch"), reason="GPSampler needs torch"),
    ),
    pytest.param(lambda: optuna.samplers.BruteForceSampler(seed=6), DISCRETE, {}, id="brute"),
    pytest.param(
        lambda: optuna.samplers.GridSampler({"a": ["p", "q", "r", "s"], "b": list(range(8))}, 1),
        DISCRETE,
        {},
        id="grid",
    ),
    pytest.param(
        lambda: optuna.samplers.PartialFixedSampler({"b": 5}, _tpe(seed=8, n_startup_trials=3)),
        DISCRETE,
        {},
        id="partial-fixed",
    ),
]


def objectives(config: dict[str, Any]) -> dict[str, Any]:
    """Two objectives of a config of any of the spaces above."""
    value = sum(float(v) for v in config.values() if isinstance(v, int | float))
    value += sum(len(v) for v in config.values() if isinstance(v, str))
    return {"loss": value, "gain": -value * value}


def run_any(search: OptunaSearch, asks: int) -> list[Op]:
    """Ask and tell `asks` times, one trial at a time."""
    log: list[Op] = []
    for index in range(asks):
        config = search.suggest(f"t{index}")
        assert isinstance(config, dict)
        log.append(("ask", f"t{index}", config))
        log.append(("tell", f"t{index}", objectives(config)))
        search.on_trial_complete(f"t{index}", objectives(config))
    return log


def set_up(search: OptunaSearch, space: dict[str, Any]) -> OptunaSearch:
    """As a Tuner (and a restore with `search_alg=`) sets a searcher up."""
    assert search.set_search_properties("loss", "min", space)
    search.use_seed(2026)
    return search


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
@pytest.mark.parametrize(("make", "space", "objective"), BUILT_IN)
def test_every_built_in_sampler_passed_again_continues_exactly(
    make: Callable[[], Any], space: dict[str, Any], objective: dict[str, Any]
) -> None:
    original = set_up(OptunaSearch(sampler=make(), **objective), space)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert original.to_spec() is None
        assert original.to_spec() is None  # said once
    name = type(make()).__name__
    assert len(caught) == 1
    assert f"its sampler {name} is one you built" in str(caught[0].message)
    assert "search_alg=OptunaSearch(...)" in str(caught[0].message)
    log = run_any(original, 12)
    following = original.suggest("next")

    # The restore's path: the searcher built again, as the user passes it.
    fresh = set_up(OptunaSearch(sampler=make(), **objective), space)
    replay(fresh, log)
    assert fresh.suggest("next") == following


def test_a_sampler_the_user_built_is_used_as_built_not_reseeded() -> None:
    """The experiment's seed seeds only the default sampler: an unseeded
    sampler of the user's draws as Optuna makes it draw, as in Ray."""
    first = run(searcher(sampler=_tpe(n_startup_trials=4)), 6)
    second = run(searcher(sampler=_tpe(n_startup_trials=4)), 6)
    assert first != second
    assert run(searcher(), 6) == run(searcher(), 6)


def test_a_searcher_that_cannot_be_written_says_every_reason_in_one_warning() -> None:
    search = searcher(
        space=lambda trial: trial.suggest_float("x", 0, 1) and None, sampler=_tpe(seed=1)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert search.to_spec() is None
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "TPESampler(seed=...)" in message
    assert "define-by-run" in message
    assert "Tuner.restore(path, trainable, search_alg=OptunaSearch(...))" in message


def test_a_seed_beside_a_sampler_is_ignored_with_a_warning_as_in_ray() -> None:
    with pytest.warns(UserWarning, match="seed is ignored"):
        search = OptunaSearch(metric="loss", mode="min", sampler=_tpe(seed=1), seed=5)
    search.set_search_properties(None, None, SPACE)
    alone = OptunaSearch(metric="loss", mode="min", sampler=_tpe(seed=1))
    alone.set_search_properties(None, None, SPACE)
    assert run(search, 8) == run(alone, 8)


# -- objectives, results, points ------------------------------------------------------------------


def test_several_objectives_are_told_as_several_values() -> None:
    recorder = Recorder()
    search = searcher(metric=["loss", "gain"], mode=["min", "max"], sampler=recorder)
    config = search.suggest("t0")
    assert isinstance(config, dict)
    search.on_trial_complete("t0", results(config))
    assert [d.name for d in recorder.directions] == ["MINIMIZE", "MAXIMIZE"]
    state, values, _, _ = recorder.finished[0]
    assert state == "COMPLETE"
    assert values == [loss(config), -loss(config) * config["width"]]


def test_intermediate_results_are_reported_and_an_early_end_is_pruned() -> None:
    recorder = Recorder()
    search = searcher(sampler=recorder)
    for trial_id in ("ok", "stopped", "failed"):
        search.suggest(trial_id)
    search.on_trial_result("stopped", {"loss": 4.0, "training_iteration": 1})
    search.on_trial_result("stopped", {"loss": 3.0, "training_iteration": 2})
    search.on_trial_complete("ok", {"loss": 1.5, "training_iteration": 1})
    search.on_trial_complete("stopped", None)
    search.on_trial_complete("failed", None, error=True)
    search.on_trial_complete("ok", {"loss": 0.0})  # a second completion is ignored, as in Ray
    assert [(state, values, steps) for state, values, steps, _ in recorder.finished] == [
        ("COMPLETE", [1.5], {}),
        ("PRUNED", [3.0], {1: 4.0, 2: 3.0}),  # Optuna: a pruned trial's last report
        ("FAIL", None, {}),
    ]


def test_a_result_without_the_metric_is_pruned_not_failed() -> None:
    recorder = Recorder()
    search = searcher(sampler=recorder)
    search.suggest("t0")
    search.on_trial_complete("t0", {"other": 1.0})
    assert recorder.finished[0][0] == "PRUNED"


def test_the_last_result_reaches_a_samplers_constraints_func() -> None:
    seen: list[dict[str, Any]] = []

    def constraints(trial: Any) -> list[float]:
        seen.append(dict(trial.user_attrs))
        return [trial.user_attrs["memory_gb"] - 8]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # Optuna 5 deprecates constraints_func
        sampler = _tpe(seed=1, constraints_func=constraints)
    search = searcher(sampler=sampler)
    search.suggest("t0")
    search.on_trial_complete("t0", {"loss": 1.0, "memory_gb": 12, "tags": ["a", "b"]})
    assert seen == [{"loss": 1.0, "memory_gb": 12, "tags": ["a", "b"]}]


def test_a_define_by_run_function_sees_the_results_of_earlier_trials() -> None:
    seen: list[dict[str, Any]] = []

    def space(trial: Any) -> None:
        finished = trial.study.get_trials(
            deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)
        )
        seen.extend(dict(done.user_attrs) for done in finished)
        trial.suggest_float("x", 0.0, 1.0)

    search = searcher(space=space)
    search.suggest("t0")
    search.on_trial_complete("t0", {"loss": 1.0, "memory_gb": 12})
    search.suggest("t1")
    assert seen == [{"loss": 1.0, "memory_gb": 12}]


def test_points_to_evaluate_come_first_then_the_search() -> None:
    points = [
        {"width": 1.0, "height": 2.0, "activation": "relu", "model": {"layers": 2, "lr": 0.01}},
        {"width": 4.0},
    ]
    search = searcher(points_to_evaluate=points)
    first = search.suggest("t0")
    second = search.suggest("t1")
    third = search.suggest("t2")
    assert first == points[0]
    assert isinstance(second, dict)
    assert second["width"] == 4.0
    assert set(second) == {"width", "height", "activation", "model"}  # the rest is sampled
    assert third not in points


@pytest.mark.parametrize(
    ("point", "field"),
    [
        ({"width": 50.0}, "OptunaSearch.points_to_evaluate[0]['width']"),
        ({"model": {"layers": 9}}, "OptunaSearch.points_to_evaluate[0]['model']['layers']"),
        ({"depth": 3}, "OptunaSearch.points_to_evaluate[0]['depth']"),
        ({"activation": "gelu"}, "OptunaSearch.points_to_evaluate[0]['activation']"),
    ],
)
def test_a_point_outside_the_space_is_an_error_naming_it(point: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidFieldError) as caught:
        searcher(points_to_evaluate=[point])
    assert caught.value.field == field


def test_a_point_may_name_nested_parameters_as_ray_flattens_them() -> None:
    search = searcher(points_to_evaluate=[{"model/lr": 0.01, "model": {"layers": 3}}])
    config = search.suggest("t0")
    assert isinstance(config, dict)
    assert config["model"] == {"lr": 0.01, "layers": 3}


def test_a_point_may_carry_the_spaces_constants() -> None:
    search = searcher(points_to_evaluate=[{"steps": 100, "width": 2.0}])
    config = search.suggest("t0")
    assert isinstance(config, dict)
    assert config["width"] == 2.0


def test_evaluated_rewards_are_told_as_finished_trials_as_optuna_would_be() -> None:
    points = [{"x": 0.5, "c": "a"}, {"x": -1.5, "c": "b"}, {"x": 2.0, "c": "a"}]
    rewards = [0.25, 2.25, 4.0]
    space = {"x": tune.uniform(-3, 3), "c": tune.choice(["a", "b"])}
    search = OptunaSearch(
        space,
        metric="loss",
        mode="min",
        sampler=_tpe(seed=4, n_startup_trials=3),
        points_to_evaluate=points,
        evaluated_rewards=rewards,
    )
    bare = optuna.create_study(sampler=_tpe(seed=4, n_startup_trials=3))
    distributions = {
        "x": optuna.distributions.FloatDistribution(-3, 3),
        "c": optuna.distributions.CategoricalDistribution(["a", "b"]),
    }
    for point, reward in zip(points, rewards, strict=True):
        bare.add_trial(
            optuna.trial.create_trial(params=point, distributions=distributions, value=reward)
        )
    assert search.suggest("t0") == bare.ask(distributions).params


def test_evaluated_rewards_need_one_reward_per_point() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        OptunaSearch(
            {"x": tune.uniform(0, 1)},
            metric="loss",
            mode="min",
            points_to_evaluate=[{"x": 0.5}],
            evaluated_rewards=[1.0, 2.0],
        )
    assert caught.value.field == "OptunaSearch.evaluated_rewards"


def test_a_point_evaluated_elsewhere_is_told_with_its_config() -> None:
    space = {"x": tune.uniform(-3, 3)}
    search = OptunaSearch(space, metric="loss", mode="min", sampler=_tpe(seed=4))
    search.add_evaluated_point({"x": 1.0, "steps": 3}, 0.5)
    search.add_evaluated_point({"x": 2.0}, 0.0, error=True)
    bare = optuna.create_study(sampler=_tpe(seed=4))
    dist: dict[str, optuna.distributions.BaseDistribution] = {
        "x": optuna.distributions.FloatDistribution(-3, 3)
    }
    bare.add_trial(optuna.trial.create_trial(params={"x": 1.0}, distributions=dist, value=0.5))
    bare.add_trial(
        optuna.trial.create_trial(
            params={"x": 2.0}, distributions=dist, state=optuna.trial.TrialState.FAIL
        )
    )
    assert search.suggest("t0") == bare.ask(dist).params
    with pytest.raises(InvalidFieldError) as caught:
        search.add_evaluated_point({"x": 9.0}, 1.0)
    assert caught.value.field == "OptunaSearch.add_evaluated_point.parameters['x']"
    with pytest.raises(InvalidFieldError) as caught:
        search.add_evaluated_point({"x": 1.0}, "high")  # type: ignore[arg-type]
    assert caught.value.field == "OptunaSearch.add_evaluated_point.value"


def test_a_point_evaluated_elsewhere_without_every_metric_is_taken_as_failed() -> None:
    recorder = Recorder()
    search = searcher(metric=["loss", "gain"], mode=["min", "max"], sampler=recorder)
    search.add_evaluated_point({"width": 1.0}, [1.0, None])
    search.add_evaluated_point({"width": 2.0}, [1.0, 2.0])
    config = search.suggest("t0")
    assert isinstance(config, dict)
    search.on_trial_complete("t0", {"loss": 1.0})
    # A trial the search suggested that lacks a metric ended early: pruned.
    assert [state for state, *_ in recorder.finished] == ["PRUNED"]


# -- define-by-run --------------------------------------------------------------------------------


def define_by_run_func(trial: Any) -> dict[str, Any] | None:
    """Ray's documented define-by-run function (optuna_example.ipynb)."""
    activation = trial.suggest_categorical("activation", ["relu", "tanh"])
    if activation == "relu":
        trial.suggest_float("width", 0, 20)
        trial.suggest_float("height", -100, 100)
    else:
        trial.suggest_float("width", -1, 21)
        trial.suggest_float("height", -101, 101)
    return {"steps": 100}


def test_a_define_by_run_function_is_the_space_with_its_constants() -> None:
    search = searcher(space=define_by_run_func, seed=3)
    activations = set()
    for index in range(20):
        config = search.suggest(f"t{index}")
        assert isinstance(config, dict)
        assert set(config) == {"activation", "width", "height", "steps"}
        assert config["steps"] == 100
        low = 0 if config["activation"] == "relu" else -1
        assert low <= config["width"] <= 21
        activations.add(config["activation"])
        search.on_trial_complete(f"t{index}", {"loss": loss(config)})
    assert activations == {"relu", "tanh"}


def test_an_importable_define_by_run_function_rebuilds_exactly() -> None:
    original = searcher(space=define_by_run_func)
    spec = original.to_spec()
    assert spec is not None
    assert spec["space"] == {"define_by_run": f"{__name__}:define_by_run_func"}
    log = run(original, 12)
    fresh = rebuilt(spec)
    replay(fresh, log)
    assert fresh.suggest("next") == original.suggest("next")


@pytest.mark.parametrize("module", ["tunecore.cli.__main__", "json.tool", "optuna_no_such"])
def test_a_spec_naming_a_module_not_imported_never_imports_it(module: str) -> None:
    """A log's spec names the define-by-run function; rebuilding it imports
    nothing but Optuna: a module this process has not loaded is an error."""
    spec = searcher(space=define_by_run_func).to_spec()
    assert spec is not None
    forged = {**spec, "space": {"define_by_run": f"{module}:main"}}
    sys.modules.pop(module, None)
    with pytest.raises(ImportError, match="never imports it"):
        OptunaSearch.from_spec(json.loads(json.dumps(forged)))
    assert module not in sys.modules


def test_a_define_by_run_lambda_gives_no_spec_and_says_so() -> None:
    search = searcher(space=lambda trial: trial.suggest_float("x", 0, 1) and None)
    with pytest.warns(UserWarning, match="define-by-run"):
        assert search.to_spec() is None
    assert search.set_search_properties("loss", "min", SPACE) is False


def test_define_by_run_takes_points_and_evaluated_points() -> None:
    point = {"activation": "tanh", "width": 20.5, "height": 0.0}
    search = searcher(space=define_by_run_func, points_to_evaluate=[point])
    assert search.suggest("t0") == {**point, "steps": 100}
    search.add_evaluated_point({"activation": "relu", "width": 1.0, "height": 2.0}, 3.0)
    with pytest.raises(InvalidFieldError, match="every parameter") as caught:
        search.add_evaluated_point({"activation": "relu"}, 3.0)
    assert caught.value.field == "OptunaSearch.add_evaluated_point.parameters"
    with (
        pytest.raises(InvalidFieldError, match="values Optuna takes"),
        pytest.warns(UserWarning, match="out of the range"),  # Optuna's FixedTrial says so too
    ):
        search.add_evaluated_point({"activation": "relu", "width": 50.0, "height": 2.0}, 3.0)


def test_a_define_by_run_function_returning_something_else_is_an_error() -> None:
    search = searcher(space=lambda trial: [trial.suggest_float("x", 0, 1)])
    with pytest.raises(InvalidFieldError, match=r"OptunaSearch.space\(trial\)"):
        search.suggest("t0")


# -- errors ---------------------------------------------------------------------------------------


def test_the_constructor_is_rays_argument_for_argument() -> None:
    names = list(inspect.signature(OptunaSearch).parameters)
    assert names == [
        "space",
        "metric",
        "mode",
        "points_to_evaluate",
        "sampler",
        "study_name",
        "storage",
        "seed",
        "evaluated_rewards",
    ]
    positional = OptunaSearch({"x": tune.uniform(0, 1)}, "loss", "min", [{"x": 0.5}])
    assert positional.suggest("t0") == {"x": 0.5}


def test_without_optuna_it_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(sys.modules):
        if name == "optuna" or name.startswith(("optuna.", "tunecore.search.")):
            parent, _, child = name.rpartition(".")
            if hasattr(sys.modules.get(parent), child):  # importing again rebinds it
                monkeypatch.setattr(sys.modules[parent], child, getattr(sys.modules[parent], child))
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "optuna", None)
    module = importlib.import_module("tunecore.search.optuna")  # importing works
    with pytest.raises(ImportError) as caught:
        module.OptunaSearch()
    assert str(caught.value) == "OptunaSearch needs optuna: pip install 'tunecore[optuna]'"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"metric": "loss", "mode": "maximize"}, "OptunaSearch.mode"),
        ({"metric": ["a", "b"], "mode": ["min", "obs"]}, "OptunaSearch.mode[1]"),
        ({"metric": ["a", "b"], "mode": "min"}, "OptunaSearch.metric"),
        ({"metric": ["a"], "mode": ["min", "max"]}, "OptunaSearch.metric"),
        ({"storage": object()}, "OptunaSearch.storage"),
        ({"sampler": "tpe"}, "OptunaSearch.sampler"),
        ({"seed": 1.5}, "OptunaSearch.seed"),
        ({"points_to_evaluate": [{"x": object()}]}, "OptunaSearch.points_to_evaluate[0]['x']"),
    ],
)
def test_bad_arguments_are_errors_naming_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidFieldError) as caught:
        OptunaSearch(**kwargs)
    assert caught.value.field == field


def test_suggesting_without_an_objective_or_a_space_says_what_is_missing() -> None:
    no_metric = OptunaSearch({"x": tune.uniform(0, 1)})
    no_metric.set_search_properties("loss", "min", {})  # not taken: it has a space
    with pytest.raises(InvalidFieldError, match=r"metric= and mode= to OptunaSearch \(with"):
        no_metric.suggest("t0")
    with pytest.raises(InvalidFieldError) as caught:
        OptunaSearch({"x": tune.uniform(0, 1)}, mode=["min", "max"])
    assert caught.value.field == "OptunaSearch.metric"
    no_space = OptunaSearch(metric="loss", mode="min")
    with pytest.raises(InvalidFieldError, match="search space"):
        no_space.suggest("t0")
    only_constants = OptunaSearch(metric="loss", mode="min")
    only_constants.set_search_properties(None, None, {"steps": 10})
    with pytest.raises(InvalidFieldError, match="search space"):
        only_constants.suggest("t0")


def test_a_mode_without_a_metric_optimises_rays_anonymous_metric() -> None:
    recorder = Recorder()
    search = OptunaSearch({"x": tune.uniform(0, 1)}, mode="max", sampler=recorder)
    assert search.metric == "_metric"  # as Ray sets it up, before the first suggestion
    search.suggest("t0")
    search.on_trial_complete("t0", {"_metric": 2.0})
    assert recorder.finished[0][1] == [2.0]


def test_the_tuners_metric_and_mode_fill_in_what_the_searcher_lacks() -> None:
    search = OptunaSearch()
    assert search.set_search_properties("acc", "max", {"x": tune.uniform(0, 1)}) is True
    assert (search.metric, search.mode) == ("acc", "max")
    config = search.suggest("t0")
    assert isinstance(config, dict)
    assert 0 <= config["x"] <= 1
    assert not math.isnan(config["x"])


# -- in an experiment -----------------------------------------------------------------------------


def simulated_trainable(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    """Two objectives of a config, the later iterations slower for wide ones."""
    metrics = results(config)
    del metrics["training_iteration"]
    return metrics, 1.0 + float(config["width"]) / 10  # type: ignore[arg-type]


def simulated(
    search: OptunaSearch, root: Path, *, seed: int, concurrency: int, name: str = "sim"
) -> tunecore.ResultGrid:
    return tunecore.simulate(
        simulated_trainable,
        param_space=SPACE,
        tune_config=TuneConfig(
            search_alg=ConcurrencyLimiter(search, max_concurrent=concurrency),
            metric="loss",
            mode="min",
            num_samples=14,
            seed=seed,
        ),
        run_config=RunConfig(storage_path=str(root), name=name, verbose=0),
        max_iterations=2,
    )


SAMPLERS: dict[str, tuple[Callable[[], OptunaSearch], bool]] = {
    # name: (how the searcher is built, whether the restore needs it again)
    "default tpe": (OptunaSearch, False),
    "tpe, two objectives": (
        lambda: OptunaSearch(metric=["loss", "gain"], mode=["min", "max"]),
        False,
    ),
    "the user's tpe": (lambda: OptunaSearch(sampler=_tpe(seed=3, n_startup_trials=4)), True),
    "nsga-ii": (
        lambda: OptunaSearch(metric=["loss", "gain"], mode=["min", "max"], sampler=_nsga(seed=4)),
        True,
    ),
}


@pytest.mark.filterwarnings("ignore:OptunaSearch. its sampler:UserWarning")
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.sampled_from(sorted(SAMPLERS)),
    seed=st.integers(0, 2**31 - 1),
    concurrency=st.sampled_from([1, 8]),
    cut=st.floats(0.0, 1.0),
)
def test_after_a_crash_anywhere_the_rebuilt_search_suggests_what_the_run_did(
    tmp_path_factory: pytest.TempPathFactory, kind: str, seed: int, concurrency: int, cut: float
) -> None:
    root = tmp_path_factory.mktemp("resume")
    make, passed_again = SAMPLERS[kind]
    grid = simulated(make(), root, seed=seed, concurrency=concurrency)
    assert not grid.errors
    given = make() if passed_again else None
    asks = assert_a_rebuilt_searcher_repeats_every_logged_suggestion(root / "sim", cut, given)
    assert asks == 14


def test_the_same_seed_gives_the_same_log_bytes_with_eight_concurrent(tmp_path: Path) -> None:
    for run_name in ("one", "two"):
        simulated(OptunaSearch(), tmp_path / run_name, seed=5, concurrency=8)
    logs = [
        b"".join(path.read_bytes() for path in sorted((tmp_path / run / "sim").glob("events*")))
        for run in ("one", "two")
    ]
    assert logs[0]
    assert logs[0] == logs[1]


def trainable(config: dict[str, Any]) -> None:
    tunecore.report({"loss": loss(config)})


def fit(
    root: Path,
    callbacks: list[Any] | None = None,
    search: OptunaSearch | None = None,
    concurrent: int = 2,
) -> tunecore.ResultGrid:
    return Tuner(
        trainable,
        param_space=SPACE,
        tune_config=TuneConfig(
            search_alg=ConcurrencyLimiter(search or OptunaSearch(), max_concurrent=concurrent),
            metric="loss",
            mode="min",
            num_samples=12,
            seed=11,
        ),
        run_config=RunConfig(
            storage_path=str(root),
            name="exp",
            verbose=0,
            executor="in_process",
            callbacks=callbacks or [],
        ),
    ).fit()


def asked_configs(experiment: Path) -> list[JsonDict | None]:
    return [event.config for event in read_log(experiment).events if isinstance(event, Asked)]


def test_a_restored_run_continues_with_exactly_the_uninterrupted_runs_suggestions(
    tmp_path: Path,
) -> None:
    whole = fit(tmp_path / "whole")
    expected = asked_configs(tmp_path / "whole" / "exp")
    assert len(expected) == 12
    with pytest.raises(Crash):
        fit(tmp_path / "cut", [CrashAfterTrials(5)])
    assert 0 < len(asked_configs(tmp_path / "cut" / "exp")) < 12
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchResumeWarning)
        resumed = Tuner.restore(str(tmp_path / "cut" / "exp"), trainable).fit()
    assert asked_configs(tmp_path / "cut" / "exp") == expected
    assert [r.metrics["loss"] for r in resumed] == [r.metrics["loss"] for r in whole]


@pytest.mark.filterwarnings("ignore:OptunaSearch. its sampler:UserWarning")
def test_a_restore_takes_the_users_sampler_again_and_continues_exactly(tmp_path: Path) -> None:
    def search() -> OptunaSearch:
        return OptunaSearch(sampler=_nsga(seed=21))

    # One trial at a time: NSGA-II's generations depend on the order trials
    # end in, which two real runs share only then.
    fit(tmp_path / "whole", search=search(), concurrent=1)
    expected = asked_configs(tmp_path / "whole" / "exp")
    with pytest.raises(Crash):
        fit(tmp_path / "cut", [CrashAfterTrials(5)], search(), concurrent=1)
    cut = str(tmp_path / "cut" / "exp")
    with pytest.raises(SearcherNotGivenError, match="search_alg="):
        Tuner.restore(cut, trainable).fit()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchResumeWarning)
        Tuner.restore(cut, trainable, search_alg=search()).fit()
    assert asked_configs(tmp_path / "cut" / "exp") == expected


@pytest.mark.filterwarnings("ignore:OptunaSearch. its sampler:UserWarning")
def test_a_restore_with_an_unseeded_sampler_says_it_goes_on_otherwise(tmp_path: Path) -> None:
    with pytest.raises(Crash):
        fit(tmp_path, [CrashAfterTrials(5)], OptunaSearch(sampler=_tpe()))
    again = OptunaSearch(sampler=_tpe())
    with pytest.warns(SearchResumeWarning, match="seed it"):
        resumed = Tuner.restore(str(tmp_path / "exp"), trainable, search_alg=again).fit()
    assert len(resumed) == 12
    assert not resumed.errors


def test_a_warm_start_tells_the_study_the_earlier_experiments_trials(tmp_path: Path) -> None:
    first = simulated(OptunaSearch(), tmp_path, seed=1, concurrency=1, name="first")
    warmed = OptunaSearch(sampler=_tpe(seed=3, n_startup_trials=4))
    simulated(
        warmed.warm_start(from_experiment=tmp_path / "first"),
        tmp_path,
        seed=2,
        concurrency=1,
        name="second",
    )
    bare = optuna.create_study(sampler=_tpe(seed=3, n_startup_trials=4))
    distributions = {
        "width": optuna.distributions.FloatDistribution(0, 20),
        "height": optuna.distributions.FloatDistribution(-100, 100),
        "activation": optuna.distributions.CategoricalDistribution(["relu", "tanh"]),
        "model/layers": optuna.distributions.IntDistribution(1, 4),
        "model/lr": optuna.distributions.FloatDistribution(1e-4, 1e-1, log=True),
    }
    for trial in read_log(tmp_path / "first").events:
        if isinstance(trial, Asked):
            config = trial.config
            assert config is not None
            params = {
                "width": config["width"],
                "height": config["height"],
                "activation": config["activation"],
                "model/layers": config["model"]["layers"],  # type: ignore[index, call-overload]
                "model/lr": config["model"]["lr"],  # type: ignore[index, call-overload]
            }
            bare.add_trial(
                optuna.trial.create_trial(
                    params=params,
                    distributions=distributions,
                    value=loss(config),
                )
            )
    first_ask = asked_configs(tmp_path / "second")[0]
    assert first_ask == config_of_params(bare.ask(distributions).params)
    assert len(first) == 14


def config_of_params(params: dict[str, Any]) -> JsonDict:
    return {
        "width": params["width"],
        "height": params["height"],
        "activation": params["activation"],
        "model": {"layers": params["model/layers"], "lr": params["model/lr"]},
    }


def test_a_spec_that_is_not_one_to_spec_wrote_is_refused_naming_the_field() -> None:
    search = OptunaSearch(metric="loss", mode="min", seed=1)
    search.set_search_properties(None, None, SPACE)
    spec = search.to_spec()
    assert spec is not None
    assert msgspec.json.decode(msgspec.json.encode(spec)) == spec  # plain JSON
    with pytest.raises(InvalidFieldError, match=r"OptunaSearch\.from_spec.*seed"):
        OptunaSearch.from_spec({**spec, "seed": "one"})
    with pytest.raises(InvalidFieldError, match=r"OptunaSearch spec\.version"):
        OptunaSearch.from_spec({**spec, "version": 99})


def test_a_spec_of_the_version_before_rebuilds_its_default_sampler_and_refuses_a_built_one() -> (
    None
):
    """Logs written before tunecore stopped describing samplers: version 1
    with no sampler (the default TPE on the seed) goes on as version 2 does;
    one naming a sampler the user built asks for the searcher again."""
    original = OptunaSearch(
        space={"x": optuna.distributions.FloatDistribution(0.0, 1.0)},
        metric="loss",
        mode="min",
        seed=3,
    )
    spec = original.to_spec()
    assert isinstance(spec, dict)
    older: JsonDict = {**spec, "version": 1, "sampler": None}
    assert rebuilt(older).suggest("a") == rebuilt(spec).suggest("a")
    sampler: JsonDict = {"class": "optuna.samplers:NSGAIISampler", "arguments": {}}
    built: JsonDict = {**older, "sampler": sampler}
    with pytest.raises(InvalidFieldError, match=r"spec\.sampler.*search_alg="):
        OptunaSearch.from_spec(built)
