"""Ray's searcher wrappers around tunecore's searchers, as Ray's docs write
them (tune/api/suggestion.rst: `ConcurrencyLimiter(OptunaSearch(...),
max_concurrent=4)`, `Repeater(HyperOptSearch(...), repeat=3)`), type-check
under mypy --strict and pyright and go into `TuneConfig(search_alg=...)`.
Nothing here runs (see `public_api.py`)."""

from __future__ import annotations

from typing import assert_type

from tunecore import TuneConfig
from tunecore.search import ConcurrencyLimiter, Repeater
from tunecore.search.hyperopt import HyperOptSearch
from tunecore.search.optuna import OptunaSearch


def limited_optuna() -> TuneConfig:
    algo = OptunaSearch(metric="loss", mode="min")
    limited = ConcurrencyLimiter(algo, max_concurrent=4)
    assert_type(limited, ConcurrencyLimiter)
    assert_type(limited.max_concurrent, int)
    return TuneConfig(search_alg=limited, num_samples=8)


def repeated_hyperopt() -> TuneConfig:
    repeated = Repeater(HyperOptSearch(metric="loss", mode="min"), repeat=3)
    assert_type(repeated, Repeater)
    assert_type(repeated.repeat, int)
    return TuneConfig(search_alg=repeated, metric="loss", mode="min")


def limited_repeats() -> TuneConfig:
    inner = Repeater(OptunaSearch(), repeat=2, set_index=False)
    return TuneConfig(search_alg=ConcurrencyLimiter(inner, max_concurrent=2, batch=True))
