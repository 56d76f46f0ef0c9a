"""Synthetic objectives with known optima, as `tunecore.simulate` trainables.

Each `Objective` bundles a trainable `(config, iteration) -> (metrics,
seconds)`, the param space it is searched over, the metric and mode, the
best value any config can reach, and how many iterations a trial runs. They
let `benchmarks.search_quality` say how close a searcher gets within a trial
budget, over seeds, without training anything.

- Branin (2-D, minimum 0.397887 at three points) and Hartmann-6 (6-D,
  minimum -3.32237): the standard test functions of the Bayesian
  optimisation literature, one iteration per trial (the function value).
- A learning curve where good configs are slow starters:
  `accuracy(c, t) = q(c) * (1 - exp(-t / tau(c)))` over 81 iterations, with
  the final quality `q(c) = -hartmann3(c) / 3.86278` in [0, 1] (1 at
  Hartmann-3's minimum) and a time constant `tau(c) = 1 + 30 q(c)**2` that
  grows with it. In the first iterations a mediocre config (q around 0.2)
  is ahead of the best one (at t = 1: 0.073 against 0.032); the best pull
  ahead after about 15 iterations. This is the case that misleads
  HyperBand's aggressive brackets and that a model of where good configs
  lie (BOHB) is meant to make up for. `accuracy(c, 81)` increases with `q`,
  so the optimum is at Hartmann-3's minimiser: `1 - exp(-81 / 31)`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import tunecore
from tunecore.model import JsonDict
from tunecore.shell.executors.simulated import SimulatedTrainable


@dataclass(frozen=True)
class Objective:
    """A trainable with a known optimum, and how to search it."""

    name: str
    trainable: SimulatedTrainable
    param_space: dict[str, object]
    metric: str
    mode: Literal["min", "max"]
    optimum: float
    iterations: int


def _floats(config: JsonDict, names: Sequence[str]) -> list[float]:
    values = [config.get(name) for name in names]
    floats = [v for v in values if isinstance(v, float | int) and not isinstance(v, bool)]
    if len(floats) != len(names):
        raise TypeError(f"config {config!r} needs numbers at {list(names)}")
    return [float(v) for v in floats]


# -- Branin ------------------------------------------------------------------------

BRANIN_OPTIMUM = 0.397887
BRANIN_MINIMISERS = ((-math.pi, 12.275), (math.pi, 2.275), (9.42478, 2.475))


def branin(x1: float, x2: float) -> float:
    """Branin-Hoo on [-5, 10] x [0, 15]."""
    b = 5.1 / (4 * math.pi**2)
    c = 5 / math.pi
    t = 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def branin_trainable(config: JsonDict, _iteration: int) -> tuple[JsonDict, float]:
    x1, x2 = _floats(config, ("x1", "x2"))
    return {"value": branin(x1, x2)}, 1.0


BRANIN = Objective(
    name="Branin",
    trainable=branin_trainable,
    param_space={"x1": tunecore.uniform(-5.0, 10.0), "x2": tunecore.uniform(0.0, 15.0)},
    metric="value",
    mode="min",
    optimum=BRANIN_OPTIMUM,
    iterations=1,
)


# -- Hartmann ----------------------------------------------------------------------

_ALPHA = (1.0, 1.2, 3.0, 3.2)

_A6 = (
    (10.0, 3.0, 17.0, 3.5, 1.7, 8.0),
    (0.05, 10.0, 17.0, 0.1, 8.0, 14.0),
    (3.0, 3.5, 1.7, 10.0, 17.0, 8.0),
    (17.0, 8.0, 0.05, 10.0, 0.1, 14.0),
)
_P6 = (
    (0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886),
    (0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991),
    (0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650),
    (0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381),
)
_A3 = (
    (3.0, 10.0, 30.0),
    (0.1, 10.0, 35.0),
    (3.0, 10.0, 30.0),
    (0.1, 10.0, 35.0),
)
_P3 = (
    (0.3689, 0.1170, 0.2673),
    (0.4699, 0.4387, 0.7470),
    (0.1091, 0.8732, 0.5547),
    (0.0381, 0.5743, 0.8828),
)

HARTMANN6_OPTIMUM = -3.32237
HARTMANN6_MINIMISER = (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573)
HARTMANN3_OPTIMUM = -3.86278
HARTMANN3_MINIMISER = (0.114614, 0.555649, 0.852547)


def _hartmann(
    x: Sequence[float], a: Sequence[Sequence[float]], p: Sequence[Sequence[float]]
) -> float:
    if len(x) != len(p[0]):
        raise ValueError(f"x={list(x)!r} must have {len(p[0])} coordinates")
    return -sum(
        alpha
        * math.exp(-sum(aij * (xj - pij) ** 2 for aij, xj, pij in zip(ai, x, pi, strict=True)))
        for alpha, ai, pi in zip(_ALPHA, a, p, strict=True)
    )


def hartmann6(x: Sequence[float]) -> float:
    """Hartmann-6 on [0, 1]^6."""
    return _hartmann(x, _A6, _P6)


def hartmann3(x: Sequence[float]) -> float:
    """Hartmann-3 on [0, 1]^3."""
    return _hartmann(x, _A3, _P3)


_H6_NAMES = tuple(f"x{i}" for i in range(1, 7))


def hartmann6_trainable(config: JsonDict, _iteration: int) -> tuple[JsonDict, float]:
    return {"value": hartmann6(_floats(config, _H6_NAMES))}, 1.0


HARTMANN6 = Objective(
    name="Hartmann-6",
    trainable=hartmann6_trainable,
    param_space={name: tunecore.uniform(0.0, 1.0) for name in _H6_NAMES},
    metric="value",
    mode="min",
    optimum=HARTMANN6_OPTIMUM,
    iterations=1,
)


# -- a learning curve with slow starters ------------------------------------------

CURVE_ITERATIONS = 81
_CURVE_NAMES = ("x1", "x2", "x3")


def quality(x: Sequence[float]) -> float:
    """The accuracy a config converges to: Hartmann-3 scaled into [0, 1]."""
    return hartmann3(x) / HARTMANN3_OPTIMUM


def time_constant(q: float) -> float:
    """Iterations to reach 63% of `q`: the better the config, the slower."""
    return 1.0 + 30.0 * q**2


def accuracy(x: Sequence[float], iteration: int) -> float:
    q = quality(x)
    return q * (1.0 - math.exp(-iteration / time_constant(q)))


LEARNING_CURVE_OPTIMUM = 1.0 - math.exp(-CURVE_ITERATIONS / time_constant(1.0))


def curve_trainable(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    return {"accuracy": accuracy(_floats(config, _CURVE_NAMES), iteration)}, 1.0


LEARNING_CURVE = Objective(
    name="Learning curve",
    trainable=curve_trainable,
    param_space={name: tunecore.uniform(0.0, 1.0) for name in _CURVE_NAMES},
    metric="accuracy",
    mode="max",
    optimum=LEARNING_CURVE_OPTIMUM,
    iterations=CURVE_ITERATIONS,
)
