# mypy: ignore-errors
"""HyperBand over a function trainable that checkpoints from a temp dir.

Follows Ray Tune's python/ray/tune/examples/hyperband_function_example.py:
HyperBand pauses trials, so the function saves a checkpoint every 3 steps
in a tempfile.TemporaryDirectory and resumes from tune.get_checkpoint().
"""

import json
import os
import tempfile

import numpy as np
import ray

import tunecore as tune
from tunecore.schedulers import HyperBandScheduler


def train_func(config):
    step = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "checkpoint.json")) as f:
                step = json.load(f)["timestep"] + 1

    for timestep in range(step, 100):
        v = np.tanh(float(timestep) / config.get("width", 1))
        v *= config.get("height", 1)

        # Checkpoint the state of the training every 3 steps
        # Note that this is only required for certain schedulers
        if timestep % 3 == 0:
            with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
                with open(os.path.join(temp_checkpoint_dir, "checkpoint.json"), "w") as f:
                    json.dump({"timestep": timestep}, f)
                tune.report(
                    {"episode_reward_mean": v},
                    checkpoint=tune.Checkpoint.from_directory(temp_checkpoint_dir),
                )
        else:
            tune.report({"episode_reward_mean": v})


ray.init(num_cpus=4)

# Hyperband early stopping, configured with `episode_reward_mean` as the
# objective and `training_iteration` as the time unit,
# which is automatically filled by Tune.
hyperband = HyperBandScheduler(max_t=9)

tuner = tune.Tuner(
    train_func,
    run_config=tune.RunConfig(
        name="hyperband_test",
        stop={"training_iteration": 9},
        failure_config=tune.FailureConfig(fail_fast=True),
    ),
    tune_config=tune.TuneConfig(
        num_samples=6,
        metric="episode_reward_mean",
        mode="max",
        scheduler=hyperband,
    ),
    param_space={"height": tune.uniform(0, 100)},
)
results = tuner.fit()
best_result = results.get_best_result()
print("Best hyperparameters found were: ", best_result.config)

assert len(results) == 6
assert not results.errors
iterations = sorted(r.metrics["training_iteration"] for r in results)
# Successive halving stops some trials early; the survivors reach max_t.
assert iterations[0] < 9, iterations
assert iterations[-1] == 9, iterations
# A trial dropped by a halving stops where it paused, at a milestone.
assert set(iterations) <= {1, 3, 9}, iterations
assert best_result.metrics["training_iteration"] == 9
assert 0 <= best_result.config["height"] <= 100
# Every trial reported a checkpoint at its first step.
assert all(r.checkpoint is not None for r in results)
# A paused trial went on from its checkpoint: its iterations keep counting.
for r in results:
    assert r.metrics_dataframe["training_iteration"].max() == r.metrics["training_iteration"]
