"""The exact-resume properties every seeded searcher object must have,
written once for each to take (Optuna's own, in test_optuna.py, came first).

- After a crash anywhere in the log, the searcher rebuilt from what came
  before (from its logged spec) suggests exactly what the run went on to
  suggest: Hypothesis picks the seed, the concurrency and the cut.
- The same seed gives the same event log, byte for byte.
- `Tuner.restore` after a crash mid-run ends with exactly the
  uninterrupted run's suggestions and results.

A searcher's test module makes them with its own factory and sizes
(`test_x = crash_anywhere(...)`): a model-based searcher on torch takes
seconds per suggestion, so it runs fewer trials and examples.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tunecore
from tests.crashes import Crash, CrashAfterTrials
from tests.search.flat_space import SPACE, loss, simulated_loss
from tests.search.logged_runs import assert_a_rebuilt_searcher_repeats_every_logged_suggestion
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import Asked, JsonDict
from tunecore.search import ConcurrencyLimiter, Searcher
from tunecore.shell.eventlog import read_log
from tunecore.shell.searchers import SearchResumeWarning

Make = Callable[[], Searcher]
PropertyTest = Callable[..., None]


def simulated(
    search: Searcher, root: Path, *, seed: int, concurrency: int, samples: int
) -> tunecore.ResultGrid:
    """A simulated run of `samples` trials on the flat space, in `root/sim`."""
    return tunecore.simulate(
        simulated_loss,
        param_space=dict(SPACE),
        tune_config=TuneConfig(
            search_alg=ConcurrencyLimiter(search, max_concurrent=concurrency),
            metric="loss",
            mode="min",
            num_samples=samples,
            seed=seed,
        ),
        run_config=RunConfig(storage_path=str(root), name="sim", verbose=0),
        max_iterations=2,
    )


def crash_anywhere(make: Make, *, samples: int, examples: int) -> PropertyTest:
    """After a crash anywhere, the rebuilt searcher suggests what the run did."""

    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        seed=st.integers(0, 2**31 - 1),
        concurrency=st.sampled_from([1, 4]),
        cut=st.floats(0.0, 1.0),
    )
    def test(
        tmp_path_factory: pytest.TempPathFactory, seed: int, concurrency: int, cut: float
    ) -> None:
        root = tmp_path_factory.mktemp("resume")
        grid = simulated(make(), root, seed=seed, concurrency=concurrency, samples=samples)
        assert not grid.errors
        assert 0 < len(grid) <= samples  # a searcher may finish early (ZOOpt's budget)
        asks = assert_a_rebuilt_searcher_repeats_every_logged_suggestion(root / "sim", cut)
        assert asks >= len(grid)

    return test


def same_log_bytes(make: Make, *, samples: int) -> PropertyTest:
    """The same seed gives the same log, byte for byte, with concurrent trials."""

    def test(tmp_path: Path) -> None:
        for run in ("one", "two"):
            simulated(make(), tmp_path / run, seed=5, concurrency=4, samples=samples)
        logs = [
            b"".join(path.read_bytes() for path in sorted((tmp_path / run / "sim").glob("events*")))
            for run in ("one", "two")
        ]
        assert logs[0]
        assert logs[0] == logs[1]

    return test


def _trainable(config: dict[str, Any]) -> None:
    tunecore.report({"loss": loss(config)})


def _fit(make: Make, root: Path, samples: int, callbacks: list[Any]) -> tunecore.ResultGrid:
    return Tuner(
        _trainable,
        param_space=dict(SPACE),
        tune_config=TuneConfig(
            # One at a time: with more, which trial ends first is the wall
            # clock's (crash_anywhere covers concurrency, in virtual time).
            search_alg=ConcurrencyLimiter(make(), max_concurrent=1),
            metric="loss",
            mode="min",
            num_samples=samples,
            seed=11,
        ),
        run_config=RunConfig(
            storage_path=str(root),
            name="exp",
            verbose=0,
            executor="in_process",
            callbacks=callbacks,
        ),
    ).fit()


def _asked(experiment: Path) -> list[JsonDict | None]:
    """Every answer the searcher gave, in log order (None: nothing then)."""
    return [event.config for event in read_log(experiment).events if isinstance(event, Asked)]


def restore_continues(make: Make, *, samples: int, crash_after: int) -> PropertyTest:
    """`Tuner.restore` after a crash ends as the uninterrupted run ended."""

    def test(tmp_path: Path) -> None:
        whole = _fit(make, tmp_path / "whole", samples, [])
        expected = _asked(tmp_path / "whole" / "exp")
        assert 0 < sum(config is not None for config in expected) <= samples  # ZOOpt's budget
        with pytest.raises(Crash):
            _fit(make, tmp_path / "cut", samples, [CrashAfterTrials(crash_after)])
        assert 0 < len(_asked(tmp_path / "cut" / "exp")) < len(expected)
        with warnings.catch_warnings():
            warnings.simplefilter("error", SearchResumeWarning)
            resumed = Tuner.restore(str(tmp_path / "cut" / "exp"), _trainable).fit()
        assert _asked(tmp_path / "cut" / "exp") == expected
        assert [r.metrics["loss"] for r in resumed] == [r.metrics["loss"] for r in whole]

    return test


__all__ = ["crash_anywhere", "restore_continues", "same_log_bytes", "simulated"]
