"""A searcher written with Ray Tune's imperative API runs in the shell; one
built on Ray Tune's own base class, which only Ray Tune runs, is refused
where it is passed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.search import BasicVariantGenerator, ConcurrencyLimiter, Repeater, Searcher


class RayStyle(Searcher):
    def suggest(self, trial_id: str) -> Any:
        return {"x": 1}


def test_a_ray_style_searcher_is_accepted_inside_a_limiter() -> None:
    # The limiter's type parameter is the core's searcher protocol: an object
    # it holds until fit() replaces it is outside what mypy can see.
    searcher = ConcurrencyLimiter(RayStyle(), max_concurrent=1)
    assert TuneConfig(search_alg=searcher).search_alg is searcher


def test_tunecores_own_search_algorithms_are_accepted_in_any_wrapper() -> None:
    nested = Repeater(ConcurrencyLimiter(RayStyle(), max_concurrent=2), repeat=2)
    assert TuneConfig(search_alg=nested).search_alg is nested
    generator = ConcurrencyLimiter(BasicVariantGenerator(), max_concurrent=1)
    assert TuneConfig(search_alg=generator).search_alg is generator


# Ray Tune's base class as the refusal reads it (its module and name): ray.tune
# does not import in the project's environment (no `ray[tune]`). The same
# refusal of FLAML's BlendSearch, on the real class, is docs/ray-examples.md
# row 311.
RaysSearcher = type("Searcher", (), {"__module__": "ray.tune.search.searcher"})


class BuiltOnRaysSearcher(RaysSearcher):  # type: ignore[misc, valid-type]
    def suggest(self, trial_id: str) -> Any:
        return {"x": 1}


@pytest.mark.parametrize("wrap", [lambda s: s, lambda s: ConcurrencyLimiter(s, max_concurrent=4)])
def test_a_searcher_built_on_ray_tunes_own_class_is_refused_naming_it(
    wrap: Callable[[object], object],
) -> None:
    with pytest.raises(ValueError, match=r"TuneConfig\.search_alg=") as raised:
        TuneConfig(search_alg=wrap(BuiltOnRaysSearcher()))
    message = str(raised.value)
    assert "BuiltOnRaysSearcher is built on Ray Tune's own ray.tune.search.searcher.Searcher" in (
        message
    )
    assert "tunecore.search.Searcher" in message


def test_any_other_object_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"TuneConfig\.search_alg=<object object at .*expected"):
        TuneConfig(search_alg=object())


def reports_once(config: dict[str, Any]) -> None:
    tunecore.report({"score": 1.0})


def test_restore_refuses_a_searcher_built_on_ray_tunes_own_class(tmp_path: Path) -> None:
    """`Tuner.restore(search_alg=...)` refuses what `TuneConfig` refuses (it
    used to drop it unseen), naming where it was passed."""
    tuner = Tuner(
        reports_once,
        run_config=RunConfig(
            name="exp", storage_path=str(tmp_path), verbose=0, executor="in_process"
        ),
    )
    tuner.fit()
    searcher = ConcurrencyLimiter(BuiltOnRaysSearcher(), max_concurrent=1)
    with pytest.raises(ValueError, match=r"Tuner\.restore\.search_alg=") as raised:
        Tuner.restore(str(tmp_path / "exp"), reports_once, search_alg=searcher)
    assert "built on Ray Tune's own ray.tune.search.searcher.Searcher" in str(raised.value)
    # A searcher tunecore drives is taken as before.
    assert Tuner.restore(str(tmp_path / "exp"), reports_once, search_alg=RayStyle()) is not None


def report_x(config: dict[str, Any]) -> None:
    tunecore.report({"score": config["x"]})


@pytest.mark.parametrize(
    "wrapped",
    [
        lambda: ConcurrencyLimiter(BasicVariantGenerator(), max_concurrent=1),
        lambda: Repeater(BasicVariantGenerator(), repeat=2),
        lambda: Repeater(ConcurrencyLimiter(BasicVariantGenerator(), max_concurrent=1), repeat=2),
    ],
)
def test_a_wrapped_generator_without_a_space_is_refused_saying_what_to_use(
    wrapped: Callable[[], object], tmp_path: Path
) -> None:
    """Ray Tune issues #15156 and #19879 in Ray 2.x paths: Ray refuses both
    wrappers around a `BasicVariantGenerator()` (its limiter with "only
    works with `Searcher` objects"); the Tuner gives the param space only to
    a generator that is the search_alg itself (docs/ray-examples.md #610)."""
    tuner = Tuner(
        report_x,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=TuneConfig(search_alg=wrapped(), num_samples=2, metric="score", mode="max"),
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    )
    with pytest.raises(ValueError, match=r"TuneConfig\.search_alg=") as raised:
        tuner.fit()
    message = str(raised.value)
    assert "Searcher inside" in message
    assert "BasicVariantGenerator(max_concurrent=N)" in message
    assert "TuneConfig(max_concurrent_trials=N)" in message


def test_a_wrapped_generator_given_its_own_space_still_runs(tmp_path: Path) -> None:
    space = {"x": tunecore.grid_search([1, 2, 3])}
    results = Tuner(
        report_x,
        param_space=space,
        tune_config=TuneConfig(
            search_alg=ConcurrencyLimiter(BasicVariantGenerator(space), max_concurrent=1)
        ),
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    ).fit()
    assert sorted(cast(int, r.metrics["score"]) for r in results) == [1, 2, 3]
