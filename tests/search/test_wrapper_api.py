"""Ray's Searcher API called on a `ConcurrencyLimiter` or a `Repeater`:
each passes it on to the searcher object it wraps, as Ray's do."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

import tunecore
from tests.search.flat_space import SPACE
from tunecore.core.search import BasicVariantGenerator, uniform
from tunecore.search import ConcurrencyLimiter, Repeater, Searcher

optuna_search = pytest.importorskip("tunecore.search.optuna")
optuna_package = pytest.importorskip("optuna")


def optuna() -> Any:
    """TPE from the first told trial on, so what it is told shows."""
    sampler = optuna_package.samplers.TPESampler(n_startup_trials=1, seed=4)
    space = {"x": tunecore.uniform(-3.0, 3.0)}
    return optuna_search.OptunaSearch(space, metric="loss", mode="min", sampler=sampler)


def test_a_point_given_to_a_limiter_reaches_the_searcher_it_wraps() -> None:
    limited = ConcurrencyLimiter(optuna(), max_concurrent=2)
    limited.add_evaluated_point({"x": 1.0}, 0.5)
    limited.add_evaluated_point({"x": 2.0}, 0.0, error=True)
    direct = optuna()
    direct.add_evaluated_point({"x": 1.0}, 0.5)
    direct.add_evaluated_point({"x": 2.0}, 0.0, True)
    told_nothing = optuna()
    suggested = limited.searcher.suggest("t0")
    assert suggested == direct.suggest("t0")
    assert suggested != told_nothing.suggest("t0")


@dataclass
class Trial:
    """What `add_evaluated_trials` reads of a trial (Ray's `Trial`)."""

    config: dict[str, Any]
    last_result: dict[str, Any]
    status: str = "TERMINATED"


def test_an_earlier_runs_trials_given_to_a_limiter_reach_the_searcher_it_wraps() -> None:
    trials = [Trial({"x": 1.0}, {"loss": 0.5, "done": True}), Trial({"x": 2.0}, {"other": 1})]
    limited = ConcurrencyLimiter(optuna(), max_concurrent=2)
    limited.add_evaluated_trials(trials, metric="loss")
    direct = optuna()
    direct.add_evaluated_point({"x": 1.0}, 0.5)
    assert limited.searcher.suggest("t0") == direct.suggest("t0")


@dataclass
class Own(Searcher):
    """A searcher of a user's own that records what reaches it."""

    calls: list[tuple[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(metric="score", mode="max")

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any
    ) -> bool:
        self.calls.append(("set_search_properties", (metric, mode, config)))
        return True


def test_search_properties_metric_mode_and_restore_are_the_wrapped_searchers() -> None:
    own = Own()
    limited = ConcurrencyLimiter(own, max_concurrent=1)
    assert (limited.metric, limited.mode) == ("score", "max")
    assert limited.set_search_properties("loss", "min", {"x": 1})
    repeated = Repeater(own, repeat=2)
    assert repeated.set_search_properties("gain", "max", {"y": 2})
    assert own.calls == [
        ("set_search_properties", ("loss", "min", {"x": 1})),
        ("set_search_properties", ("gain", "max", {"y": 2})),
    ]
    limited.restore_from_dir("/earlier/experiment")
    assert own.restore_source == "/earlier/experiment"


def test_a_searcher_that_cannot_take_points_says_so_as_rays_does() -> None:
    zoopt = pytest.importorskip("tunecore.search.zoopt")
    pytest.importorskip("zoopt")
    limited = ConcurrencyLimiter(zoopt.ZOOptSearch(budget=4, dim_dict=dict(SPACE)), 1)
    with pytest.raises(NotImplementedError, match=r"ZOOptSearch\.add_evaluated_point"):
        limited.add_evaluated_point({"x": 1.0, "activation": "relu"}, 1.0)
    built_in = ConcurrencyLimiter(BasicVariantGenerator({"x": uniform(0, 1)}), 1)
    with pytest.raises(
        AttributeError,
        match=r"ConcurrencyLimiter\.add_evaluated_point: the wrapped BasicVariantGenerator has no",
    ):
        built_in.add_evaluated_point({"x": 0.5}, 1.0)


def test_the_user_facing_wrappers_are_the_cores_structs_at_run_time() -> None:
    """A type checker sees `tunecore.search`'s wrappers declared with Ray's
    constructors (tests/typing/searcher_wrappers.py); they run as the core's."""
    from tunecore.core import search as core_search  # noqa: PLC0415

    assert ConcurrencyLimiter is core_search.ConcurrencyLimiter
    assert Repeater is core_search.Repeater
    limited = ConcurrencyLimiter(optuna(), max_concurrent=4)
    assert isinstance(limited, core_search.ConcurrencyLimiter)
    assert limited.max_concurrent == 4
