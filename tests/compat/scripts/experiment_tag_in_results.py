# mypy: ignore-errors
"""Where a trial's `experiment_tag` shows, and where it does not.

Follows Ray Tune's user guides (tune-metrics, tune-output: a callback's
`on_trial_result`, the trial's result.json and progress.csv, a Tuner's
`ResultGrid`, `ExperimentAnalysis` of the experiment's path). Ray Tune
2.60 adds `experiment_tag` to a result only after its callbacks heard it
(`Trial.update_last_result`, after `on_trial_result`): so the callbacks,
the result files they write, the checkpoints' metrics and the frames read
from the files lack it, while `trial.last_result` and `Result.metrics`
(kept in the experiment's state, read back from its path too) have it.
"""

import csv
import json
import os
import tempfile

import tunecore as tune
from tunecore import Checkpoint

heard = []
stopper_heard = []
completed_last = {}


class TagWatcher(tune.Callback):
    def on_trial_result(self, iteration, trials, trial, result, **info):
        heard.append("experiment_tag" in result)

    def on_trial_complete(self, iteration, trials, trial, **info):
        completed_last[trial.trial_id] = trial.last_result.get("experiment_tag")


def stopper(trial_id, result):
    stopper_heard.append("experiment_tag" in result)
    return False


def train_fn(config):
    for step in range(3):
        with tempfile.TemporaryDirectory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "step.txt"), "w") as f:
                f.write(str(step))
            tune.report(
                {"score": config["x"] * step},
                checkpoint=Checkpoint.from_directory(checkpoint_dir),
            )


storage_path = tempfile.mkdtemp()
tuner = tune.Tuner(
    train_fn,
    param_space={"x": tune.grid_search([1, 2])},
    tune_config=tune.TuneConfig(metric="score", mode="max"),
    run_config=tune.RunConfig(
        name="tag_experiment",
        storage_path=storage_path,
        callbacks=[TagWatcher()],
        stop=stopper,
    ),
)
results = tuner.fit()
assert not results.errors, results.errors

# Callbacks and stoppers hear each result before the tag is added. The
# stopper also hears each function's end, as the trial's last result again
# (marked done): that one has the tag.
assert heard == [False] * 6, heard
assert sorted(stopper_heard) == [False] * 6 + [True] * 2, stopper_heard
tags = sorted(completed_last.values())
assert tags == ["0_x=1", "1_x=2"], tags

for result in results:
    tag = result.metrics["experiment_tag"]
    assert tag in tags, (tag, tags)
    assert completed_last[result.metrics["trial_id"]] == tag
    with open(os.path.join(result.path, "result.json")) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    assert len(lines) == 3, lines
    assert all("experiment_tag" not in line for line in lines), lines
    with open(os.path.join(result.path, "progress.csv")) as f:
        header = next(csv.reader(f))
    assert "experiment_tag" not in header, header
    assert "score" in header, header
    assert "experiment_tag" not in result.metrics_dataframe.columns
    assert len(result.best_checkpoints) == 3, result.best_checkpoints
    for _, metrics in result.best_checkpoints:
        assert "experiment_tag" not in metrics, metrics

assert "experiment_tag" not in results.get_dataframe().columns
assert "experiment_tag" not in results.get_dataframe("score", "max").columns
assert results.get_best_result().metrics["experiment_tag"] == "1_x=2"

# Read back from the experiment's path.
experiment_path = os.path.join(storage_path, "tag_experiment")
analysis = tune.ExperimentAnalysis(experiment_path)
assert sorted(r["experiment_tag"] for r in analysis.results.values()) == tags
assert sorted(t.last_result["experiment_tag"] for t in analysis.trials) == tags
assert sorted(analysis.results_df["experiment_tag"]) == tags
assert "experiment_tag" not in analysis.dataframe().columns
for frame in analysis.trial_dataframes.values():
    assert "experiment_tag" not in frame.columns
    assert len(frame) == 3

restored = tune.Tuner.restore(experiment_path, trainable=train_fn).get_results()
assert sorted(r.metrics["experiment_tag"] for r in restored) == tags
assert "experiment_tag" not in restored.get_dataframe().columns
for result in restored:
    assert "experiment_tag" not in result.metrics_dataframe.columns
    for _, metrics in result.best_checkpoints:
        assert "experiment_tag" not in metrics, metrics

print("experiment_tag: in last_result and Result.metrics only")
