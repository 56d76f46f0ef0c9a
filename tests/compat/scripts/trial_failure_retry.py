# mypy: ignore-errors
"""A trial that crashes is retried from its latest checkpoint.

Follows Ray Tune's "How to Enable Fault Tolerance in Ray Tune" guide,
doc/source/tune/doc_code/fault_tolerance.py (__ft_trial_failure__:
FailureConfig(max_failures=3)), with a crash simulated once.
"""

import json
import os
import tempfile

import tunecore as tune


def trainable(config):
    # Checkpoint loading
    checkpoint = tune.get_checkpoint()
    start = 1
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "checkpoint.json")) as f:
                start = json.load(f)["epoch"] + 1

    for epoch in range(start, config["num_epochs"]):
        # Do some training...
        if epoch == 5 and not os.path.exists(config["marker"]):
            open(config["marker"], "w").close()
            raise RuntimeError("Simulated node failure at epoch 5")

        # Checkpoint saving
        with tempfile.TemporaryDirectory() as tmpdir:
            with open(os.path.join(tmpdir, "checkpoint.json"), "w") as f:
                json.dump({"epoch": epoch}, f)
            tune.report({"epoch": epoch}, checkpoint=tune.Checkpoint.from_directory(tmpdir))


tuner = tune.Tuner(
    trainable,
    param_space={"num_epochs": 10, "marker": os.path.join(os.getcwd(), "crashed_once")},
    run_config=tune.RunConfig(
        storage_path=os.path.expanduser("~/ray_results"),
        name="trial_fault_tolerance",
        failure_config=tune.FailureConfig(max_failures=3),
    ),
)
results = tuner.fit()

assert os.path.exists(os.path.join(os.getcwd(), "crashed_once"))
assert not results.errors
result = results[0]
# The retry went on from the checkpoint of epoch 4: every epoch reported once.
assert result.metrics["epoch"] == 9
assert result.metrics["training_iteration"] == 9
assert list(result.metrics_dataframe["epoch"]) == list(range(1, 10))
