# mypy: ignore-errors
"""Getting data in and out of Tune, as a notebook runs it.

Follows Ray Tune's tutorial (doc/source/tune/tutorials/
tune_get_data_in_and_out.md), its cells in order and shortened: a Tuner is
built for a function of `(config, data)` before that function gets its
`with_parameters` (built, never run), `training_function` is defined again
and wrapped again, and the experiment is read back with
`Tuner.restore(path, trainable=...)` and a new wrapper, as a notebook
re-run does.
"""

import os
import pickle
import tempfile

import pandas as pd

import tunecore as tune
from tunecore import Tuner


def training_function(config, data):
    model = {"hyperparameter_a": config["hyperparameter_a"]}
    for epoch in range(config["epochs"]):
        metric = (0.1 + model["hyperparameter_a"] * epoch / 100) ** (-1) + data["A"].sum()
        tune.report({"metric": metric})


# Built in passing: the function still needs its data.
tuner = Tuner(training_function, param_space={"hyperparameter_a": 1.0, "epochs": 2})

data = pd.DataFrame({"A": [1, 2, 3], "B": [4, 5, 6]})
tuner = Tuner(
    tune.with_parameters(training_function, data=data),
    param_space={"hyperparameter_a": tune.uniform(0, 20), "epochs": 3},
    tune_config=tune.TuneConfig(num_samples=2),
)
results = tuner.fit()
assert not results.errors
assert all(r.metrics["training_iteration"] == 3 for r in results)


def training_function(config, data):
    checkpoint = tune.get_checkpoint()
    start_epoch = 0
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "model.pkl"), "rb") as f:
                start_epoch = pickle.load(f)["epoch"] + 1
    for epoch in range(start_epoch, config["epochs"]):
        metric = config["hyperparameter_a"] * epoch + data["A"].sum()
        with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
            with open(os.path.join(temp_checkpoint_dir, "model.pkl"), "wb") as f:
                pickle.dump({"epoch": epoch}, f)
            tune.report(
                {"metric": metric},
                checkpoint=tune.Checkpoint.from_directory(temp_checkpoint_dir),
            )


tuner = Tuner(
    tune.with_parameters(training_function, data=data),
    param_space={"hyperparameter_a": tune.uniform(0, 20), "epochs": 3},
    tune_config=tune.TuneConfig(num_samples=2, metric="metric", mode="max"),
)
results = tuner.fit()
path = results.experiment_path

restored = Tuner.restore(path, trainable=tune.with_parameters(training_function, data=data))
again = restored.get_results()
assert len(again) == 2 and not again.errors
best = again.get_best_result()
assert best.metrics["metric"] == max(r.metrics["metric"] for r in results)
assert best.checkpoint is not None
