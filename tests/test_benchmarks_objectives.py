"""The search-quality benchmark's objectives reach their published optima at
their published minimisers, and nothing in the space does better."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from benchmarks import objectives
from benchmarks.objectives import (
    BRANIN,
    HARTMANN6,
    LEARNING_CURVE,
    Objective,
)

import tunecore
from tunecore import RunConfig, TuneConfig
from tunecore.core.search.domains import Uniform
from tunecore.model import JsonDict


def test_branin_reaches_its_optimum_at_all_three_minimisers() -> None:
    for x1, x2 in objectives.BRANIN_MINIMISERS:
        assert objectives.branin(x1, x2) == pytest.approx(0.397887, abs=1e-6)


def test_hartmann6_reaches_its_optimum_at_its_minimiser() -> None:
    assert objectives.hartmann6(objectives.HARTMANN6_MINIMISER) == pytest.approx(-3.32237, abs=1e-5)


def test_hartmann3_reaches_its_optimum_at_its_minimiser() -> None:
    assert objectives.hartmann3(objectives.HARTMANN3_MINIMISER) == pytest.approx(-3.86278, abs=1e-5)


def test_the_learning_curve_peaks_at_the_best_config_after_81_iterations() -> None:
    best = objectives.accuracy(objectives.HARTMANN3_MINIMISER, 81)
    assert best == pytest.approx(1 - math.exp(-81 / 31), abs=1e-6)
    assert LEARNING_CURVE.optimum == pytest.approx(best, abs=1e-6)


def test_final_accuracy_grows_with_quality_so_the_optimum_is_the_best_config() -> None:
    def final(q: float) -> float:
        return q * (1 - math.exp(-81 / objectives.time_constant(q)))

    qualities = [i / 1000 for i in range(1001)]
    finals = [final(q) for q in qualities]
    assert finals == sorted(finals)


def test_good_configs_start_slowly() -> None:
    """A mediocre config is ahead early, the best one is ahead at the end."""
    mediocre = _config_with_quality(0.2)
    best = objectives.HARTMANN3_MINIMISER
    assert objectives.accuracy(mediocre, 1) > objectives.accuracy(best, 1)
    assert objectives.accuracy(mediocre, 3) > objectives.accuracy(best, 3)
    assert objectives.accuracy(best, 27) > objectives.accuracy(mediocre, 27)


def _config_with_quality(target: float) -> list[float]:
    """A point on the segment from a poor corner to the minimiser whose
    quality is `target` (bisection; quality rises along it)."""
    low, high = 0.0, 1.0
    start, end = (1.0, 0.0, 0.0), objectives.HARTMANN3_MINIMISER

    def point(s: float) -> list[float]:
        return [a + s * (b - a) for a, b in zip(start, end, strict=True)]

    assert objectives.quality(point(low)) < target < objectives.quality(point(high))
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if objectives.quality(point(mid)) < target else (low, mid)
    return point(low)


@pytest.mark.parametrize("objective", [BRANIN, HARTMANN6, LEARNING_CURVE], ids=lambda o: o.name)
def test_no_random_config_beats_the_optimum(objective: Objective) -> None:
    rng = random.Random(0)
    for _ in range(2_000):
        config: JsonDict = {}
        for name in objective.param_space:
            domain = objective.param_space[name]
            assert isinstance(domain, Uniform)
            config[name] = rng.uniform(domain.low, domain.high)
        metrics, seconds = objective.trainable(config, objective.iterations)
        value = metrics[objective.metric]
        assert isinstance(value, float)
        assert seconds > 0
        if objective.mode == "min":
            assert value >= objective.optimum - 1e-6
        else:
            assert value <= objective.optimum + 1e-6


def test_a_trainable_names_a_missing_parameter() -> None:
    with pytest.raises(TypeError, match=r"x2"):
        objectives.branin_trainable({"x1": 1.0}, 1)


def test_the_learning_curve_runs_under_simulate(tmp_path: Path) -> None:
    results = tunecore.simulate(
        LEARNING_CURVE.trainable,
        param_space=LEARNING_CURVE.param_space,
        tune_config=TuneConfig(metric="accuracy", mode="max", num_samples=3, seed=0),
        run_config=RunConfig(name="curve", storage_path=str(tmp_path), verbose=0),
        max_iterations=LEARNING_CURVE.iterations,
    )
    for result in results:
        assert result.metrics["training_iteration"] == 81
        final = result.metrics["accuracy"]
        assert isinstance(final, float)
        assert 0 < final < LEARNING_CURVE.optimum
