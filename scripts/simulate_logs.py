"""Print the SHA-256 of every file `tunecore.simulate` writes for a fixed
set of experiments, so two versions of tunecore can be compared byte for
byte: run it under each (`PYTHONPATH=<tree>/src python
scripts/simulate_logs.py DIR`) and diff the outputs.

The experiments cover every request the core makes of the shell: the
param space's `sample_from` draws (`DrawValues` for the searcher), PBT's
mutation functions and `custom_explore_fn` (`DrawValues` for the
scheduler), a searcher object's suggestions (`AskSearcher`), and the
run-ahead horizons of FIFO and ASHA (`ContinueTrial.until`).
"""

from __future__ import annotations

import hashlib
import random
import sys
from pathlib import Path
from typing import Any

import tunecore
from tunecore import RunConfig, TuneConfig
from tunecore.model import Resources
from tunecore.schedulers import ASHAScheduler, PopulationBasedTraining
from tunecore.search import ConcurrencyLimiter, Searcher


def curve(config: dict[str, Any], iteration: int) -> tuple[dict[str, Any], float]:
    """A learning curve that depends on every parameter the experiments set."""
    x = float(config.get("x", 0.0))
    y = float(config.get("y", 0.0))
    rate = float(config.get("rate", 1.0))
    loss = (x - 0.3) ** 2 + y / (iteration + rate)
    return {"loss": loss}, 1.0 + (x % 0.5)


class Walker(Searcher):
    """A seeded searcher object that moves towards the best x it was told."""

    def __init__(self, metric: str | None = None, mode: str | None = None) -> None:
        super().__init__(metric=metric, mode=mode)
        self.rng = random.Random(7)
        self.best = 0.5
        self.suggested: dict[str, float] = {}

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        self.suggested[trial_id] = round(self.best + self.rng.uniform(-0.2, 0.2), 9)
        return {"x": self.suggested[trial_id]}

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        if result is not None and not error and result["loss"] < (self.best - 0.3) ** 2:
            self.best = self.suggested[trial_id]


def shrink_x(config: dict[str, Any]) -> dict[str, Any]:
    """PBT's `custom_explore_fn`: the explored config with a smaller x."""
    return {**config, "x": config["x"] * 0.9}


def experiments() -> dict[str, dict[str, Any]]:
    seeded = random.Random(3)
    return {
        "fifo_sample_from": {
            "param_space": {
                "x": tunecore.uniform(0.0, 1.0),
                "y": tunecore.sample_from(lambda spec: float(spec.config.x) * 2 + seeded.random()),
            },
            "tune_config": TuneConfig(metric="loss", mode="min", num_samples=12, seed=1),
            "max_iterations": 6,
        },
        "asha_grid": {
            "param_space": {
                "x": tunecore.grid_search([0.1, 0.3, 0.5, 0.9]),
                "y": tunecore.sample_from(lambda: seeded.choice([1.0, 2.0, 3.0])),
            },
            "tune_config": TuneConfig(
                metric="loss",
                mode="min",
                num_samples=3,
                seed=2,
                scheduler=ASHAScheduler(max_t=27, grace_period=1),
            ),
        },
        "pbt_mutations": {
            "param_space": {"x": tunecore.uniform(0.0, 1.0), "rate": 1.0},
            "tune_config": TuneConfig(
                metric="loss",
                mode="min",
                num_samples=6,
                seed=3,
                scheduler=PopulationBasedTraining(
                    perturbation_interval=2,
                    hyperparam_mutations={"rate": lambda: seeded.uniform(0.5, 4.0)},
                    custom_explore_fn=shrink_x,
                ),
            ),
            "max_iterations": 12,
        },
        "searcher_object": {
            "tune_config": TuneConfig(
                metric="loss",
                mode="min",
                num_samples=10,
                seed=4,
                search_alg=ConcurrencyLimiter(Walker(), max_concurrent=3),
            ),
            "max_iterations": 4,
        },
    }


def main(root: Path) -> None:
    for name, settings in experiments().items():
        tunecore.simulate(
            curve,
            param_space=settings.get("param_space"),
            tune_config=settings["tune_config"],
            run_config=RunConfig(storage_path=str(root), name=name, verbose=0),
            cluster=Resources(cpu=3),
            max_iterations=settings.get("max_iterations"),
            save_seconds=0.5,
        )
        for path in sorted((root / name).rglob("*")):
            if path.is_file() and path.name != ".tunecore_storage":  # a random token
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                print(f"{digest}  {path.relative_to(root)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
