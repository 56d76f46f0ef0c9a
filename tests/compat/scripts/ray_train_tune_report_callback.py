# mypy: ignore-errors
# requires: torch
# timeout: 400
"""Ray Train runs tuned by Tune, as Ray 2.60's "Hyperparameter Tuning with
Ray Tune" guide of Ray Train does it (doc/source/train/doc_code/
train_tune_interop.py, its quickstart): a function trainable
`train_driver_fn` builds a `TorchTrainer` whose `RunConfig` carries a
`TuneReportCallback`, and calls `trainer.fit()`; each Train worker's
`ray.train.report(metrics, checkpoint=...)` becomes a result of the trial,
with the checkpoint's path as `checkpoint_path`. Ray Train's names stay
Ray's (`import ray.train`, `ray.train.torch`); only Tune's are rewritten.

Smallest sizes for a 2-CPU machine: 2 trials (a grid over `lr`), 1 Train
worker each on half a CPU, each trial reserving half a CPU for its Train
driver (the guide's "Set Tune function resources", with `CPU` in place of
its custom resource). The guide's "Launch a single Train run" calls
`train_driver_fn` outside Tune, where it raises a RuntimeError (on Ray
2.60 from `TuneReportCallback()`, on tunecore already from
`get_context()`); the script checks that.
"""

import os
import random
import tempfile
import uuid

import ray.train
import ray.train.torch

import tunecore as tune
from tunecore.integration.ray_train import TuneReportCallback


# [1] Define your Ray Train worker code.
def train_fn_per_worker(train_loop_config: dict):
    # Unpack train worker hyperparameters.
    # Train feeds in the `train_loop_config` defined below.
    lr = train_loop_config["lr"]

    # training code here...
    print(
        ray.train.get_context().get_world_size(),
        ray.train.get_context().get_world_rank(),
        train_loop_config,
    )
    # model = ray.train.torch.prepare_model(...)  # Wrap model in DDP.
    with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
        ray.train.report(
            {"loss": random.random(), "lr": lr},
            checkpoint=ray.train.Checkpoint.from_directory(temp_checkpoint_dir),
        )


# [2] Define a function that launches the Ray Train run.
def train_driver_fn(config: dict):
    # Unpack run-level hyperparameters.
    # Tune feeds in hyperparameters defined in the `param_space` below.
    num_workers = config["num_workers"]

    trainer = ray.train.torch.TorchTrainer(
        train_fn_per_worker,
        train_loop_config=config["train_loop_config"],
        scaling_config=ray.train.ScalingConfig(
            num_workers=num_workers,
            resources_per_worker={"CPU": 0.5},
        ),
        run_config=ray.train.RunConfig(
            # [3] Assign unique names to each run.
            # Recommendation: use the trial id as part of the run name.
            name=f"train-trial_id={tune.get_context().get_trial_id()}",
            # [4] (Optional) Pass in a `TuneReportCallback` to propagate
            # reported results to the Tuner.
            callbacks=[TuneReportCallback()],
        ),
    )
    trainer.fit()


# Launch a single Train run: outside Tune it cannot run as written. Ray
# 2.60's `TuneReportCallback()` raises "must be used in a Tune session"
# (its `get_context().get_trial_id()` warns and gives None); tunecore's
# `get_context()` already raises outside a trial.
try:
    train_driver_fn({"num_workers": 1, "train_loop_config": {"lr": 1e-3}})
except RuntimeError as error:
    print("outside Tune:", error)
else:
    raise AssertionError("the Train driver with TuneReportCallback ran outside Tune")


# Launch a sweep of hyperparameters with Ray Tune.
tuner = tune.Tuner(
    tune.with_resources(train_driver_fn, {"CPU": 0.5}),
    param_space={
        "num_workers": 1,
        "train_loop_config": {
            "lr": tune.grid_search([1e-3, 3e-4]),
        },
    },
    run_config=tune.RunConfig(
        name=f"tune_train_example-{uuid.uuid4().hex[:6]}",
    ),
    # [5] (Optional) Set the maximum number of concurrent trials
    # in order to prevent too many Train driver processes from
    # being launched at once.
    tune_config=tune.TuneConfig(max_concurrent_trials=2),
)
results = tuner.fit()

best = results.get_best_result(metric="loss", mode="min")
print(best)

assert len(results) == 2 and not results.errors, results.errors
for result in results:
    # One Train report: rank 0's metrics, the Train checkpoint's path beside them.
    assert result.metrics["training_iteration"] == 1, result.metrics
    assert result.metrics["lr"] == result.config["train_loop_config"]["lr"], result.metrics
    checkpoint_path = result.metrics["checkpoint_path"]
    assert os.path.isdir(checkpoint_path), checkpoint_path
    assert f"train-trial_id={result.metrics['trial_id']}" in checkpoint_path, checkpoint_path
    # Ray Train stored the checkpoint; the trial has none of its own.
    assert result.checkpoint is None, result.checkpoint
assert best.metrics["loss"] == min(r.metrics["loss"] for r in results)
