# mypy: ignore-errors
"""Analysing results: ResultGrid, dataframes, best result, checkpoints.

Follows Ray Tune's "Analyzing Tune Experiment Results" guide
(tune/examples/tune_analyze_results.ipynb) and the analysis part of
doc/source/tune/doc_code/key_concepts.py (__analysis__, __results__).
"""

import json
import os
import tempfile

import tunecore as tune
from tunecore import Result, ResultGrid


def train_fn(config):
    for step in range(1, 6):
        accuracy = 1 - config["lr"] / step
        metrics = {"mean_accuracy": accuracy, "step": step}
        if step % 2 == 0:
            with tempfile.TemporaryDirectory() as tmpdir:
                with open(os.path.join(tmpdir, "state.json"), "w") as f:
                    json.dump({"step": step}, f)
                tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(tmpdir))
        else:
            tune.report(metrics)


storage_path = os.path.expanduser("~/ray_results")
exp_name = "tune_analyzing_results"
tuner = tune.Tuner(
    train_fn,
    param_space={"lr": tune.grid_search([0.1, 0.5, 0.9])},
    run_config=tune.RunConfig(
        name=exp_name,
        storage_path=storage_path,
        checkpoint_config=tune.CheckpointConfig(
            checkpoint_score_attribute="mean_accuracy", num_to_keep=2
        ),
    ),
    tune_config=tune.TuneConfig(mode="max", metric="mean_accuracy"),
)
result_grid: ResultGrid = tuner.fit()

# Restoring the results of a finished experiment from its directory.
experiment_path = os.path.join(storage_path, exp_name)
restored_tuner = tune.Tuner.restore(experiment_path, trainable=train_fn)
result_grid = restored_tuner.get_results()

# Check if there have been errors
if result_grid.errors:
    print("One of the trials failed!")
else:
    print("No errors!")
assert result_grid.num_errors == 0
assert result_grid.num_terminated == 3

num_results = len(result_grid)
print("Number of results:", num_results)
assert num_results == 3

# Iterate over results
for i, result in enumerate(result_grid):
    print(
        f"Trial #{i} finished successfully with a mean accuracy metric of:",
        result.metrics["mean_accuracy"],
    )
    assert result.metrics["training_iteration"] == 5

results_df = result_grid.get_dataframe()
print(results_df[["training_iteration", "mean_accuracy"]])
print("Shortest training time:", results_df["time_total_s"].min())
print("Longest training time:", results_df["time_total_s"].max())
assert len(results_df) == 3
assert "config/lr" in results_df.columns

best_result_df = result_grid.get_dataframe(filter_metric="mean_accuracy", filter_mode="max")
print(best_result_df[["training_iteration", "mean_accuracy"]])
assert len(best_result_df) == 3

best_result: Result = result_grid.get_best_result()
assert best_result.config == {"lr": 0.1}
assert best_result.metrics["mean_accuracy"] == 1 - 0.1 / 5
assert os.path.isdir(best_result.path)
assert best_result.path.startswith(experiment_path)
assert best_result.checkpoint is not None

# The whole history of the best trial.
df = best_result.metrics_dataframe
assert list(df["step"]) == [1, 2, 3, 4, 5]

# The best of a trial's checkpoints, by the checkpoint score attribute.
assert len(best_result.best_checkpoints) == 2
checkpoint, metrics = max(best_result.best_checkpoints, key=lambda cm: cm[1]["mean_accuracy"])
with checkpoint.as_directory() as checkpoint_dir:
    with open(os.path.join(checkpoint_dir, "state.json")) as f:
        assert json.load(f)["step"] == metrics["step"] == 4

# Another metric and mode than the experiment's.
worst = result_grid.get_best_result(metric="mean_accuracy", mode="min")
assert worst.config == {"lr": 0.9}
# Scope: the best over all results, not the last one.
assert result_grid.get_best_result(scope="all").config == {"lr": 0.1}
