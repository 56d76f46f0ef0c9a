# mypy: ignore-errors
"""Reading a finished experiment back from its directory.

Follows Ray Tune's "Analyzing Tune Experiment Results" guide
(tune/examples/tune_analyze_results.ipynb) and the ExperimentAnalysis
reference (tune/api/result_grid.rst, ray.tune.ExperimentAnalysis), plus
Tuner.get_results() after fit().
"""

import os

import tunecore as tune
from tunecore import ExperimentAnalysis


def trainable(config):
    for step in range(1, 4):
        tune.report({"score": config["x"] * step})


tuner = tune.Tuner(
    trainable,
    param_space={"x": tune.grid_search([1, 2, 3])},
    run_config=tune.RunConfig(name="analysis_example", storage_path="~/ray_results"),
)
results = tuner.fit()

# The results of the last fit(), again.
again = tuner.get_results()
assert len(again) == 3
assert sorted(r.metrics["score"] for r in again) == [3, 6, 9]

experiment_path = os.path.expanduser("~/ray_results/analysis_example")
analysis = ExperimentAnalysis(experiment_path, default_metric="score", default_mode="max")

assert len(analysis.trials) == 3
assert analysis.best_config == {"x": 3}
assert analysis.get_best_config(metric="score", mode="min") == {"x": 1}
assert analysis.best_result["score"] == 9
df = analysis.dataframe()
assert len(df) == 3
assert sorted(df["score"]) == [3, 6, 9]
# One dataframe of every result per trial.
assert len(analysis.trial_dataframes) == 3
assert all(len(trial_df) == 3 for trial_df in analysis.trial_dataframes.values())
