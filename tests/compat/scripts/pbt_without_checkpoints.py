# mypy: ignore-errors
"""Population Based Training over a function trainable that reports
metrics only, never a checkpoint.

The pattern of a user's Lightning + PB2 run (docs/ray-examples.md, row
421): the function drives a training that keeps its own checkpoints and
reports to Tune without `checkpoint=`. Written as Ray's PBT guide writes
its function trainable (pbt_guide.ipynb), minus the checkpoint. Ray Tune
2.60's PBT then has nothing to clone: each exploit is skipped ("[pbt]: no
checkpoint for trial ... Skip exploit for Trial ..."), so every trial
keeps the config it started with, no policy line is written, and no
checkpoint is the trial's (`Result.checkpoint` is None).
"""

import os
import time

import tunecore as tune
from tunecore.schedulers import PopulationBasedTraining


def train_fn(config):
    accuracy = 0.0
    for _ in range(8):
        time.sleep(0.5)  # an epoch of training
        accuracy += config["lr"] * config["layer_size"]
        tune.report({"mean_accuracy": accuracy})


if __name__ == "__main__":
    lrs = [0.001, 0.003, 0.01, 0.03]
    scheduler = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=1,
        hyperparam_mutations={"lr": lrs, "layer_size": [32, 64, 128]},
    )
    tuner = tune.Tuner(
        tune.with_resources(train_fn, {"cpu": 0.5}),
        param_space={"lr": tune.grid_search(lrs), "layer_size": 32},
        tune_config=tune.TuneConfig(metric="mean_accuracy", mode="max", scheduler=scheduler),
        run_config=tune.RunConfig(name="pbt_without_checkpoints", stop={"training_iteration": 8}),
    )
    results = tuner.fit()

    assert results.num_errors == 0
    assert sorted(result.config["lr"] for result in results) == lrs
    assert [result.config["layer_size"] for result in results] == [32] * 4
    for result in results:
        assert "@perturbed" not in result.metrics["experiment_tag"], result.metrics
        assert result.metrics["training_iteration"] == 8
        assert result.checkpoint is None
    assert not os.path.exists(os.path.join(results.experiment_path, "pbt_global.txt"))
    print("configs kept:", sorted(result.config["lr"] for result in results))
