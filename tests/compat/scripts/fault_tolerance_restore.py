# mypy: ignore-errors
"""Restore an experiment from its directory, and resume an unfinished one.

Follows Ray Tune's "How to Enable Fault Tolerance in Ray Tune" guide,
doc/source/tune/doc_code/fault_tolerance.py (__ft_initial_run__,
__ft_restored_run__, __ft_restore_multiplexing__), with the checkpoint
kept in a directory.
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
        if epoch == 5 and config.get("fail_once") and not os.path.exists(config["marker"]):
            open(config["marker"], "w").close()
            raise RuntimeError("Simulated crash at epoch 5")

        # Checkpoint saving
        with tempfile.TemporaryDirectory() as tmpdir:
            with open(os.path.join(tmpdir, "checkpoint.json"), "w") as f:
                json.dump({"epoch": epoch}, f)
            tune.report({"epoch": epoch}, checkpoint=tune.Checkpoint.from_directory(tmpdir))


storage_path = os.path.expanduser("~/ray_results")
exp_name = "tune_fault_tolerance_guide"
path = os.path.join(storage_path, exp_name)
marker = os.path.join(os.path.expanduser("~"), "crashed_once")

assert not tune.Tuner.can_restore(path)
tuner = tune.Tuner(
    trainable,
    param_space={"num_epochs": 10, "fail_once": True, "marker": marker},
    run_config=tune.RunConfig(storage_path=storage_path, name=exp_name),
)
results = tuner.fit()
# The trial crashed once at epoch 5, after 4 reports.
assert results.num_errors == 1
assert results[0].metrics["epoch"] == 4

assert tune.Tuner.can_restore(path)
tuner = tune.Tuner.restore(path, trainable=trainable, resume_errored=True)
results = tuner.fit()

assert not results.errors
result = results[0]
# It went on from its checkpoint at epoch 4, to the last epoch.
assert result.metrics["epoch"] == 9
assert result.metrics["training_iteration"] == 9
assert list(result.metrics_dataframe["epoch"]) == list(range(1, 10))

# Run the multiplexed logic again to make sure it goes through the restore branch.
if tune.Tuner.can_restore(path):
    tuner = tune.Tuner.restore(path, trainable=trainable, resume_errored=True)
else:
    tuner = tune.Tuner(
        trainable,
        param_space={"num_epochs": 10},
        run_config=tune.RunConfig(storage_path=storage_path, name=exp_name),
    )
assert tuner.get_results()
assert tuner.get_results()[0].metrics["epoch"] == 9
