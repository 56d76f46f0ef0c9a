# mypy: ignore-errors
"""Population Based Bandits over PBT's toy function trainable.

Follows Ray Tune's python/ray/tune/examples/pb2_example.py as run with
--smoke-test (eight trials, 30 iterations, on two CPUs), with the
`pbt_function` it imports from ray.tune.examples.pbt_function written out
(as in pbt_function.py).

Checked on Ray Tune 2.60 with tests/compat/on_ray_tune.py (ray[tune]
2.60.0 with GPy 1.15.0, paramz 0.10.0 and scikit-learn, 2026-12-06):
passes (922 s on a shared two-core machine).
"""

import json
import os
import random
import tempfile

import numpy as np
import ray

import tunecore as tune
from tunecore.schedulers.pb2 import PB2


def pbt_function(config):
    """Toy PBT problem: accuracy grows fastest at an lr that depends on the
    current accuracy, so only a schedule of lrs converges."""
    step = 1
    accuracy = 0.0
    lr = config["lr"]

    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "checkpoint.json"), "r") as f:
                checkpoint_dict = json.load(f)
        accuracy = checkpoint_dict["acc"]
        last_step = checkpoint_dict["step"]
        step = last_step + 1

    midpoint = 100  # lr starts decreasing after acc > midpoint
    q_tolerance = 3  # penalize exceeding lr by more than this multiple
    noise_level = 2  # add gaussian noise to the acc increase

    while True:
        if accuracy < midpoint:
            optimal_lr = 0.01 * accuracy / midpoint
        else:
            optimal_lr = 0.01 - 0.01 * (accuracy - midpoint) / midpoint
        optimal_lr = min(0.01, max(0.001, optimal_lr))

        # compute accuracy increase
        q_err = max(lr, optimal_lr) / min(lr, optimal_lr)
        if q_err < q_tolerance:
            accuracy += (1.0 / q_err) * random.random()
        elif lr > optimal_lr:
            accuracy -= (q_err - q_tolerance) * random.random()
        accuracy += noise_level * np.random.normal()
        accuracy = max(0, accuracy)

        metrics = {
            "mean_accuracy": accuracy,
            "cur_lr": lr,
            "optimal_lr": optimal_lr,  # for debugging
            "q_err": q_err,  # for debugging
            "done": accuracy > midpoint * 2,  # this stops the training process
        }

        if step % config["checkpoint_interval"] == 0:
            # Checkpoint every `checkpoint_interval` steps
            # NOTE: if the checkpointing frequency is not the same as the
            # perturbation frequency, PBT exploits the last checkpoint.
            with tempfile.TemporaryDirectory() as tmpdir:
                with open(os.path.join(tmpdir, "checkpoint.json"), "w") as f:
                    json.dump({"acc": accuracy, "step": step}, f)
                tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(tmpdir))
        else:
            tune.report(metrics)
        step += 1


ray.init(num_cpus=2)  # force pausing to happen for test

perturbation_interval = 5
pbt = PB2(
    time_attr="training_iteration",
    perturbation_interval=perturbation_interval,
    hyperparam_bounds={
        # hyperparameter bounds.
        "lr": [0.0001, 0.02],
    },
)

tuner = tune.Tuner(
    pbt_function,
    run_config=tune.RunConfig(
        name="pbt_test",
        verbose=False,
        stop={
            "training_iteration": 30,
        },
        failure_config=tune.FailureConfig(
            fail_fast=True,
        ),
    ),
    tune_config=tune.TuneConfig(
        scheduler=pbt,
        metric="mean_accuracy",
        mode="max",
        num_samples=8,
    ),
    param_space={
        "lr": 0.0001,
        # note: this parameter is perturbed but has no effect on
        # the model training in this example
        "some_other_factor": 1,
        # This parameter is not perturbed and is used to determine
        # checkpoint frequency. We set checkpoints and perturbations
        # to happen at the same frequency.
        "checkpoint_interval": perturbation_interval,
    },
)
results = tuner.fit()

print("Best hyperparameters found were: ", results.get_best_result().config)

assert len(results) == 8
assert not results.errors
for result in results:
    assert result.metrics["training_iteration"] == 30 or result.metrics["done"]
    # PB2 chooses only within the bounds, and touches nothing else.
    assert 0.0001 <= result.config["lr"] <= 0.02
    assert result.config["some_other_factor"] == 1
    assert result.config["checkpoint_interval"] == perturbation_interval
assert "mean_accuracy" in results.get_best_result().metrics
# Every trial starts at lr=0.0001; the model moved some of them.
assert any(result.config["lr"] != 0.0001 for result in results)
