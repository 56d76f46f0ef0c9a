# mypy: ignore-errors
"""`tune.run` and the `ExperimentAnalysis` it returns, as Ray 2.x docs use them.

Follows Ray Tune's `tune.run` docstring and the "Analyzing Tune
Experiment Results" guide as Ray 2.0-2.6 wrote it for `tune.run`
(`analysis.best_config`, `best_trial`, `best_result`, `best_dataframe`,
`results_df`, `dataframe(metric, mode)`, `trial_dataframes`,
`get_all_configs()`, `get_best_trial(metric, mode, scope)`,
`get_best_checkpoint(trial, metric, mode)`, `get_last_checkpoint()`), and
`ExperimentAnalysis(path)` read back from disk. Fewer samples and steps.
"""

import os
import tempfile

import tunecore as tune
from tunecore import ExperimentAnalysis


def trainable(config):
    for step in range(1, 6):
        loss = (config["a"] - 2) ** 2 + 1.0 / step
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "step.txt"), "w") as f:
                f.write(str(step))
            tune.report(
                {"mean_loss": loss, "step": step},
                checkpoint=tune.Checkpoint.from_directory(d),
            )


analysis = tune.run(
    trainable,
    config={"a": tune.grid_search([0, 1, 2, 3])},
    metric="mean_loss",
    mode="min",
    resources_per_trial={"cpu": 1},
    keep_checkpoints_num=2,
    checkpoint_score_attr="min-mean_loss",
    name="analysis_exp",
    storage_path=os.path.abspath("results"),
    verbose=1,
)

print("Best config: ", analysis.best_config)
assert analysis.best_config["a"] == 2
assert analysis.best_trial.config["a"] == 2
assert analysis.best_result["mean_loss"] == 0.2
assert len(analysis.best_dataframe) == 5
assert len(analysis.results_df) == 4
assert len(analysis.dataframe(metric="mean_loss", mode="min")) == 4
assert len(analysis.trial_dataframes) == 4
configs = analysis.get_all_configs()
assert sorted(c["a"] for c in configs.values()) == [0, 1, 2, 3]
best_all = analysis.get_best_trial("mean_loss", "min", "all")
assert best_all.config["a"] == 2
best_last = analysis.get_best_trial("step", "max", "last")
assert best_last.last_result["step"] == 5

best_ckpt = analysis.get_best_checkpoint(analysis.best_trial, metric="mean_loss", mode="min")
with best_ckpt.as_directory() as d:
    assert open(os.path.join(d, "step.txt")).read() == "5"
last_ckpt = analysis.get_last_checkpoint()  # of the best trial
with last_ckpt.as_directory() as d:
    assert open(os.path.join(d, "step.txt")).read() == "5"
with analysis.best_checkpoint.as_directory() as d:
    assert open(os.path.join(d, "step.txt")).read() == "5"

# Read the experiment back from its directory.
reloaded = ExperimentAnalysis(
    os.path.abspath("results/analysis_exp"), default_metric="mean_loss", default_mode="min"
)
assert reloaded.best_config["a"] == 2
assert len(reloaded.trials) == 4
assert sorted(reloaded.results_df["config/a"]) == [0, 1, 2, 3]
# Two checkpoints kept per trial (the best by min-mean_loss)
for trial in reloaded.trials:
    kept = [p for p in os.listdir(trial.path) if p.startswith("checkpoint_")]
    assert len(kept) == 2, (trial, kept)
