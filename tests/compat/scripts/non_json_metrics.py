# mypy: ignore-errors
"""Metrics that are not JSON, read back as the objects reported.

Written as a user's knowledge-graph search script writes it (a public
repository, row 93 of docs/ray-examples.md): its options are an
`argparse.Namespace`, the function returns its metrics with the options
among them, and the script prints `best_trial.last_result['best_opts']
.__dict__` after `tune.run`. Ray Tune keeps results in the driver as the
objects reported; its result files hold their text. The Tuner part reports
what such scripts also report: a NumPy array, NumPy scalars, a tuple, a
dataclass.
"""

import argparse
import os
from dataclasses import dataclass

import numpy as np

import tunecore as tune


def get_options(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--dim", type=int, default=8)
    return parser.parse_args(argv)


def train_kge(config):
    opts = get_options([])
    for key, value in config.items():
        setattr(opts, key.split(".")[-1], value)
    best_tmrr = 0.0
    for epoch in range(3):
        tmrr = opts.lr * opts.dim * (epoch + 1)
        best_tmrr = max(best_tmrr, tmrr)
    return {"best_tmrr": best_tmrr, "best_opts": opts}


analysis = tune.run(
    train_kge,
    config={"opts.lr": tune.grid_search([0.01, 0.1]), "opts.dim": 8},
    storage_path=os.path.expanduser("~/ray_results"),
    name="kge_search",
    verbose=0,
)
best_trial = analysis.get_best_trial("best_tmrr", "max", "last")
print("Best config:", best_trial.config)
print("Best options:", best_trial.last_result["best_opts"].__dict__)
assert best_trial.last_result["best_opts"].__dict__ == {"lr": 0.1, "dim": 8}
assert isinstance(analysis.results[best_trial.trial_id]["best_opts"], argparse.Namespace)


@dataclass
class Report:
    epochs: int
    converged: bool


def train_model(config):
    weights = np.linspace(0.0, 1.0, 4) * config["scale"]
    tune.report(
        {
            "loss": np.float32(1.0 / config["scale"]),
            "weights": weights,
            "shape": weights.shape,
            "report": Report(epochs=1, converged=True),
        }
    )


results = tune.Tuner(
    train_model,
    param_space={"scale": tune.grid_search([1.0, 2.0])},
    tune_config=tune.TuneConfig(metric="loss", mode="min"),
).fit()
best = results.get_best_result()
assert best.config == {"scale": 2.0}
assert isinstance(best.metrics["weights"], np.ndarray)
assert best.metrics["weights"].sum() == 4.0
assert best.metrics["shape"] == (4,)
assert isinstance(best.metrics["loss"], np.float32)
assert best.metrics["report"].converged
# The result files hold their JSON form; the frame is read from there.
frame = results.get_dataframe()
assert list(frame["shape"]) == [[4], [4]]
assert set(frame["report"]) == {"Report(epochs=1, converged=True)"}
