# mypy: ignore-errors
"""Reporting NumPy values, as training code does without thinking of it.

Follows the metric reporting of Ray Tune's examples (e.g.
python/ray/tune/examples/pbt_function.py, which reports NumPy-derived
accuracies) and the JSON/CSV logging described in "Logging and Outputs in
Tune" (tune/tutorials/tune-output.rst).
"""

import json
import os

import numpy as np

import tunecore as tune


def trainable(config):
    weights = np.zeros(3)
    for step in range(3):
        weights += config["lr"]
        tune.report(
            {
                "loss": np.float32(1.0 / (step + 1)),
                "step": np.int64(step),
                "improved": np.bool_(step > 0),
                "weights": weights.copy(),
            }
        )


results = tune.Tuner(
    trainable,
    param_space={"lr": tune.grid_search([0.5, 1.0])},
    tune_config=tune.TuneConfig(metric="loss", mode="min"),
).fit()

assert len(results) == 2
assert not results.errors
for result in results:
    assert result.metrics["training_iteration"] == 3
    assert float(result.metrics["loss"]) == np.float32(1.0 / 3)
    assert int(result.metrics["step"]) == 2
    # The trial's result.json holds every result as JSON.
    with open(os.path.join(result.path, "result.json")) as f:
        rows = [json.loads(line) for line in f]
    assert [row["training_iteration"] for row in rows] == [1, 2, 3]
assert len(results.get_dataframe()) == 2
assert results.get_best_result().metrics["training_iteration"] == 3
