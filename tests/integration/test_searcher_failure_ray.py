"""A searcher object of the user's whose `on_trial_result` raises, on a
real Ray (the session's, 2 CPUs): as on Ray Tune, `fit()` raises its error
from the result it was told (not at its next ask), and `Tuner.restore`,
given the fixed searcher, runs the trial it cut short on from its
checkpoint and the rest of the search."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tunecore as tune
from tests.integration import ray_style_schedulers as rs
from tests.integration.shipping import shipped_by_value
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.error import TuneError
from tunecore.search import Searcher

pytestmark = pytest.mark.usefixtures("ray_cluster", "shipped")


@pytest.fixture(scope="module")
def shipped() -> Iterator[None]:
    with shipped_by_value(rs):
        yield


class ThreeClimbs(Searcher):
    """Suggests `climb`'s x = 1, 2, 3 (4 steps each), then FINISHED; its
    `on_trial_result` raises on x = 1's result at `iteration` (None: never)."""

    def __init__(self, iteration: int | None) -> None:
        super().__init__(metric="score", mode="max")
        self.iteration = iteration
        self.asked = 0
        self.first: str | None = None  # the trial of x = 1

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        if self.asked == 3:
            return Searcher.FINISHED
        self.asked += 1
        if self.asked == 1:
            self.first = trial_id
        return {"steps": 4, "x": self.asked}

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        if (trial_id, result["training_iteration"]) == (self.first, self.iteration):
            raise RuntimeError(f"broke at iteration {self.iteration}")


def test_a_searcher_whose_on_trial_result_raises_stops_the_run_at_that_result(
    tmp_path: Path,
) -> None:
    trainable = tune.with_resources(rs.climb, {"cpu": 2})  # one trial at a time

    def tuner(searcher: Searcher) -> Tuner:
        return Tuner(
            trainable,
            tune_config=TuneConfig(search_alg=searcher, metric="score", mode="max", num_samples=3),
            run_config=RunConfig(name="exp", storage_path=str(tmp_path), verbose=0),
        )

    with pytest.raises(TuneError, match="The searcher failed: RuntimeError: broke at iteration 2"):
        tuner(ThreeClimbs(iteration=2)).fit()
    grid = tune.ResultGrid.from_path(tmp_path / "exp")
    # x = 1 stopped at the result the searcher raised on (recorded); it
    # did not run on to its 4th step, as it would if the error waited for
    # the next ask.
    by_x = {r.config["x"]: r.metrics.get("training_iteration") for r in grid}
    assert by_x[1] == 2
    assert all(iteration is None for x, iteration in by_x.items() if x != 1)
    restored = Tuner.restore(
        str(tmp_path / "exp"), trainable, search_alg=ThreeClimbs(iteration=None)
    ).fit()
    results = {r.config["x"]: r for r in restored}
    assert {x: r.metrics["training_iteration"] for x, r in results.items()} == {1: 4, 2: 4, 3: 4}
    assert all(r.error is None for r in results.values())
    # From the checkpoint of the result before the one it raised on, whose
    # save the failure cut short, as Ray Tune's restore picks it.
    assert results[1].metrics["start"] == 1
