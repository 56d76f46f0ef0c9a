"""What the tests of the flat-space searchers (HyperOpt, Nevergrad, ZOOpt)
share: a small space with a known optimum, one of every domain, and the
ask-and-tell loop the shell drives."""

from __future__ import annotations

from typing import Any

import tunecore
from tunecore.model import JsonDict
from tunecore.search import Searcher

EVERY_DOMAIN: dict[str, Any] = {
    "uniform": tunecore.uniform(-5.0, 5.0),
    "quniform": tunecore.quniform(0.0, 0.3, 0.1),
    "loguniform": tunecore.loguniform(1e-4, 1e-1),
    "qloguniform": tunecore.qloguniform(1.0, 100.0, 1.0),
    "randint": tunecore.randint(0, 4),
    "qrandint": tunecore.qrandint(1, 20, 5),
    "lograndint": tunecore.lograndint(1, 1000),
    "qlograndint": tunecore.qlograndint(4, 100, 4),
    "choice": tunecore.choice(["relu", {"kind": "tanh"}, [1, 2], 3, True]),
    "randn": tunecore.randn(0.0, 1.0),
    "qrandn": tunecore.qrandn(0.0, 1.0, 0.5),
    "one_int": tunecore.randint(3, 4),
    "nested": {"x": tunecore.uniform(0.0, 1.0), "constant": "kept"},
}

SPACE: dict[str, Any] = {
    "x": tunecore.uniform(0.0, 10.0),
    "activation": tunecore.choice(["relu", "tanh"]),
    "steps": 100,
}


def loss(config: dict[str, Any]) -> float:
    """Least (0) at x=3 with tanh."""
    return float((config["x"] - 3.0) ** 2 + (0.0 if config["activation"] == "tanh" else 1.0))


def run(found: Searcher, steps: int, sign: float = 1.0) -> list[Any]:
    """Ask and tell one trial at a time; every answer, in order."""
    answers: list[Any] = []
    for step in range(steps):
        config = found.suggest(f"t{step}")
        answers.append(config)
        assert isinstance(config, dict)
        found.on_trial_complete(f"t{step}", {"loss": sign * loss(config)})
    return answers


def value_at(config: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        config = config[part]
    return config


def simulated_loss(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    """`loss` as a trainable for `tunecore.simulate`."""
    return {"loss": loss(config)}, 1.0 + iteration
