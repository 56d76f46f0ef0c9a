# mypy: ignore-errors
# requires: torch
# timeout: 1500
"""Ray Train's own example training function (Ray 2.60's
`ray.train.examples.pytorch.torch_linear_example.train_func`, which the
Train docs' examples run with `TorchTrainer`) tuned the way Ray Train's
"Hyperparameter Tuning with Ray Tune" guide
(doc/source/train/doc_code/train_tune_interop.py) tunes a Train run: a
Tune function trainable launches the Train run with
`TuneReportCallback()`, and Tune sweeps the Train run's `lr`. The Train
run is given the guide's fault-tolerance settings, here with Ray Train
V2's own `FailureConfig` field (`max_preemption_failures`) and
`RunConfig(worker_runtime_env=...)`, which the Train workers see.

ONLY the imports are rewritten: `import ray.train`, `import ray.tune` ->
`import tunecore`, `import ray.train.torch` -> `import tunecore.torch`,
`from ray.train.examples... import` -> `from tunecore.examples... import`,
and `ray.train.X` / `ray.tune.X` in code -> `tunecore.X`. So the example
module is Ray Train's, passed through, and its `train_func` reports with
`ray.train.report` in the Train worker.

Shrunk for a 2-CPU machine: 1 Train worker, one trial at a time (as in
ray_train_tune_interop.py), 2 epochs over 64 points (the example's
`data_size`/`val_size`/`epochs` config keys). The assertions hold on Ray
Tune 2.60 as on tunecore.
"""

# flake8: noqa
# isort: skip_file

import os

os.environ["RAY_TRAIN_V2_ENABLED"] = "1"

import math
import uuid

import tunecore
import tunecore.torch
import tunecore
from tunecore.examples.pytorch.torch_linear_example import train_func
from tunecore.integration.ray_train import TuneReportCallback

TRAIN_STORAGE = os.path.abspath("train_results")  # the Ray workers share this machine


def train_fn_per_worker(train_loop_config: dict):
    # The worker's environment is the run's worker_runtime_env.
    assert os.environ["TRAIN_EXAMPLE"] == "linear", os.environ.get("TRAIN_EXAMPLE")
    return train_func(train_loop_config)


def train_driver_fn(config: dict):
    trainer = tunecore.torch.TorchTrainer(
        train_fn_per_worker,
        train_loop_config=config["train_loop_config"],
        scaling_config=tunecore.ScalingConfig(num_workers=config["num_workers"]),
        run_config=tunecore.RunConfig(
            name=f"train-trial_id={tunecore.get_context().get_trial_id()}",
            callbacks=[TuneReportCallback()],
            failure_config=tunecore.FailureConfig(max_failures=1, max_preemption_failures=2),
            worker_runtime_env={"env_vars": {"TRAIN_EXAMPLE": "linear"}},
            storage_path=TRAIN_STORAGE,
        ),
    )
    trainer.fit()


tuner = tunecore.Tuner(
    train_driver_fn,
    param_space={
        "num_workers": 1,
        "train_loop_config": {
            "lr": tunecore.grid_search([1e-2, 1e-1]),
            "epochs": 2,
            "data_size": 64,
            "val_size": 32,
            "batch_size": 16,
        },
    },
    run_config=tunecore.RunConfig(name=f"tune_train_example-{uuid.uuid4().hex[:6]}"),
    tune_config=tunecore.TuneConfig(max_concurrent_trials=1),
)
results = tuner.fit()

best = results.get_best_result(metric="loss", mode="min")
print(best.config["train_loop_config"]["lr"], best.metrics["loss"])

assert len(results) == 2 and not results.errors, results.errors
for result in results:
    # One Tune result per epoch: the example's report on rank 0.
    assert result.metrics["training_iteration"] == 2, result.metrics
    assert math.isfinite(result.metrics["loss"]), result.metrics
    checkpoint_path = result.metrics["checkpoint_path"]
    run_dir = os.path.join(TRAIN_STORAGE, f"train-trial_id={result.metrics['trial_id']}")
    assert checkpoint_path.startswith(run_dir + os.sep), checkpoint_path
    assert os.path.isfile(os.path.join(checkpoint_path, "model.pt")), checkpoint_path
assert best.metrics["loss"] == min(result.metrics["loss"] for result in results)
