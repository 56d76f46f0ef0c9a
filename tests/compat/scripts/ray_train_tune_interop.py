# mypy: ignore-errors
# requires: torch
# timeout: 1500
"""Ray Train's "Hyperparameter Tuning with Ray Tune" guide of Ray 2.60
(doc/source/train/doc_code/train_tune_interop.py, all four blocks) with
ONLY its imports rewritten: `import ray.train`, `import ray.tune` ->
`import tunecore`, `import ray.train.torch` -> `import tunecore.torch`,
and `ray.train.X` / `ray.tune.X` in code -> `tunecore.X`. So the trainer is
`tunecore.torch.TorchTrainer` (Ray Train's, passed through) given
tunecore's `ScalingConfig`/`RunConfig`/`FailureConfig`, and the Train
workers call `tunecore.report`, `get_context`, `get_checkpoint` and
`tunecore.Checkpoint.from_directory`, which are Ray Train's there.

Shrunk for a 2-CPU machine: 1 Train worker (the guide's `choice([2, 4])`),
2 trials (`batch_size` has one value), one trial at a time (the guide's
`max_concurrent_trials=2` would start two Train drivers on both CPUs,
leaving none for their workers: a deadlock, on Ray Tune too). The guide's
"Launch a single Train run" raises RuntimeError outside Tune (Ray 2.60 in
`TuneReportCallback()`, tunecore already in `get_context()`); the script
checks that instead of stopping there. The Train runs get the guide's
commented-out `storage_path` (a directory of the working directory, where
Ray Train would take `~/ray_results` of the Ray workers' home). The
assertions at the end hold on Ray Tune 2.60 as on tunecore.
"""

# flake8: noqa
# isort: skip_file

import os

os.environ["RAY_TRAIN_V2_ENABLED"] = "1"

# __quickstart_start__
import random
import tempfile
import uuid

import tunecore
import tunecore.torch
import tunecore
from tunecore.integration.ray_train import TuneReportCallback

TRAIN_STORAGE = os.path.abspath("train_results")  # the Ray workers share this machine


# [1] Define your Ray Train worker code.
def train_fn_per_worker(train_loop_config: dict):
    # Unpack train worker hyperparameters.
    # Train feeds in the `train_loop_config` defined below.
    lr = train_loop_config["lr"]

    # training code here...
    print(
        tunecore.get_context().get_world_size(),
        tunecore.get_context().get_world_rank(),
        train_loop_config,
    )
    # model = tunecore.torch.prepare_model(...)  # Wrap model in DDP.
    with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
        tunecore.report(
            {"loss": random.random()},
            checkpoint=tunecore.Checkpoint.from_directory(temp_checkpoint_dir),
        )


# [2] Define a function that launches the Ray Train run.
def train_driver_fn(config: dict):
    # Unpack run-level hyperparameters.
    # Tune feeds in hyperparameters defined in the `param_space` below.
    num_workers = config["num_workers"]

    trainer = tunecore.torch.TorchTrainer(
        train_fn_per_worker,
        train_loop_config=config["train_loop_config"],
        scaling_config=tunecore.ScalingConfig(
            num_workers=num_workers,
            # Uncomment to use GPUs.
            # use_gpu=True,
        ),
        run_config=tunecore.RunConfig(
            # [3] Assign unique names to each run.
            # Recommendation: use the trial id as part of the run name.
            name=f"train-trial_id={tunecore.get_context().get_trial_id()}",
            # [4] (Optional) Pass in a `TuneReportCallback` to propagate
            # reported results to the Tuner.
            callbacks=[TuneReportCallback()],
            # (If multi-node, configure S3 / NFS as the storage path.)
            storage_path=TRAIN_STORAGE,
        ),
    )
    trainer.fit()


# Launch a single Train run: outside Tune it raises.
try:
    train_driver_fn({"num_workers": 1, "train_loop_config": {"lr": 1e-3}})
except RuntimeError as error:
    print("outside Tune:", error)
else:
    raise AssertionError("the Train driver with TuneReportCallback ran outside Tune")


# Launch a sweep of hyperparameters with Ray Tune.
tuner = tunecore.Tuner(
    train_driver_fn,
    param_space={
        "num_workers": tunecore.choice([1]),
        "train_loop_config": {
            "lr": tunecore.grid_search([1e-3, 3e-4]),
            "batch_size": tunecore.grid_search([32]),
        },
    },
    run_config=tunecore.RunConfig(
        name=f"tune_train_example-{uuid.uuid4().hex[:6]}",
        # (If multi-node, configure S3 / NFS as the storage path.)
        # storage_path="s3://...",
    ),
    # [5] (Optional) Set the maximum number of concurrent trials
    # in order to prevent too many Train driver processes from
    # being launched at once.
    tune_config=tunecore.TuneConfig(max_concurrent_trials=1),
)
results = tuner.fit()

print(results.get_best_result(metric="loss", mode="min"))
# __quickstart_end__
assert len(results) == 2 and not results.errors, results.errors
train_runs = TRAIN_STORAGE
for result in results:
    # One Train report: rank 0's metrics, the Train checkpoint's path beside them.
    assert result.metrics["training_iteration"] == 1, result.metrics
    checkpoint_path = result.metrics["checkpoint_path"]
    run_dir = os.path.join(train_runs, f"train-trial_id={result.metrics['trial_id']}")
    assert checkpoint_path.startswith(run_dir + os.sep), checkpoint_path
    assert os.path.isdir(checkpoint_path), checkpoint_path
    # Ray Train stored the checkpoint; the trial has none of its own.
    assert result.checkpoint is None, result.checkpoint
best = results.get_best_result(metric="loss", mode="min")
assert best.metrics["loss"] == min(result.metrics["loss"] for result in results)

# __max_concurrent_trials_start__
# For a fixed size cluster, calculate this based on the limiting resource (ex: GPUs).
total_cluster_gpus = 8
num_gpu_workers_per_trial = 4
max_concurrent_trials = total_cluster_gpus // num_gpu_workers_per_trial

tuner = tunecore.Tuner(
    train_driver_fn,
    tune_config=tunecore.TuneConfig(max_concurrent_trials=max_concurrent_trials),
)
# __max_concurrent_trials_end__

# __trainable_resources_start__
import tunecore


def train_driver_fn(config):
    # trainer = TorchTrainer(...)
    ...


tuner = tunecore.Tuner(
    tunecore.with_resources(
        train_driver_fn,
        # Note: 0.01 is an arbitrary value to schedule the actor
        # onto the `worker_node_cpu` node type.
        {"TRAIN_DRIVER_RESOURCE": 0.01},
    ),
)
# __trainable_resources_end__


# __fault_tolerance_start__
import tempfile

import tunecore
import tunecore
import tunecore.torch


def train_fn_per_worker(train_loop_config: dict):
    # [1] Train worker restoration logic.
    checkpoint = tunecore.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as temp_checkpoint_dir:
            # model.load_state_dict(torch.load(...))
            ...

    with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
        # torch.save(...)
        tunecore.report(
            {"loss": 0.1},
            checkpoint=tunecore.Checkpoint.from_directory(temp_checkpoint_dir),
        )


def train_fn_driver(config: dict):
    trainer = tunecore.torch.TorchTrainer(
        train_fn_per_worker,
        run_config=tunecore.RunConfig(
            # [2] Train driver restoration is automatic, as long as
            # the (storage_path, name) remains the same across trial restarts.
            # The easiest way to do this is to attach the trial ID in the name.
            # **Do not include any timestamps or random values in the name.**
            name=f"train-trial_id={tunecore.get_context().get_trial_id()}",
            # [3] Enable worker-level fault tolerance to gracefully handle
            # Train worker failures.
            failure_config=tunecore.FailureConfig(max_failures=3),
            # (If multi-node, configure S3 / NFS as the storage path.)
            storage_path=TRAIN_STORAGE,
        ),
    )
    trainer.fit()


tuner = tunecore.Tuner(
    train_fn_driver,
    run_config=tunecore.RunConfig(
        # [4] Enable trial-level fault tolerance to gracefully handle
        # Train driver process failures.
        failure_config=tunecore.FailureConfig(max_failures=3)
    ),
)
ft_results = tuner.fit()
# __fault_tolerance_end__

# No TuneReportCallback here: the trial gets no result, its Train run a checkpoint.
assert len(ft_results) == 1 and not ft_results.errors, ft_results.errors
run_dirs = {name for name in os.listdir(train_runs) if name.startswith("train-trial_id=")}
assert len(run_dirs) == 3, run_dirs
for run_dir in run_dirs:
    stored = os.listdir(os.path.join(train_runs, run_dir))
    assert any(name.startswith("checkpoint_") for name in stored), (run_dir, stored)
