# mypy: ignore-errors
# timeout: 180
"""Function checkpointing through the `ray.train` namespace (Ray 2.7-2.40 docs).

Follows doc/source/tune/doc_code/trial_checkpoint.py as Ray 2.7-2.40 wrote
it (`from ray import train, tune`; `train.report(..., checkpoint=
train.Checkpoint.from_directory(...))`, `train.get_checkpoint()`,
`train.RunConfig(checkpoint_config=train.CheckpointConfig(...))`), then
the restore of tune-fault-tolerance.md (`Tuner.restore(path, trainable=,
resume_errored=True)`), with a trial failing once at step 3 and fewer
epochs.
"""

import json
import os
import tempfile

import tunecore as train
import tunecore as tune

FLAG = os.path.join(tempfile.gettempdir(), f"fail_once_{os.getpid()}")


def train_func(config):
    start = 1
    my_model = {"state": 0}

    checkpoint = train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "model.json")) as f:
                checkpoint_dict = json.load(f)
            start = checkpoint_dict["epoch"] + 1
            my_model = checkpoint_dict["model"]

    for epoch in range(start, config["epochs"] + 1):
        flag = f"{FLAG}_{config['lr']}"
        if epoch == 3 and config["fail"] and not os.path.exists(flag):
            open(flag, "w").close()
            raise RuntimeError("simulated failure")
        my_model["state"] += config["lr"]
        with tempfile.TemporaryDirectory() as tempdir:
            with open(os.path.join(tempdir, "model.json"), "w") as f:
                json.dump({"epoch": epoch, "model": my_model}, f)
            train.report(
                {"metric": my_model["state"], "epoch": epoch},
                checkpoint=train.Checkpoint.from_directory(tempdir),
            )


storage_path = os.path.abspath("./results")
tuner = tune.Tuner(
    train_func,
    param_space={
        "epochs": 5,
        "lr": tune.grid_search([1.0, 2.0]),
        "fail": tune.grid_search([False, True]),
    },
    run_config=train.RunConfig(
        name="train_ns_exp",
        storage_path=storage_path,
        checkpoint_config=train.CheckpointConfig(
            num_to_keep=2, checkpoint_score_attribute="metric", checkpoint_score_order="max"
        ),
    ),
)
results = tuner.fit()
assert len(results) == 4
assert results.num_errors == 2, results.num_errors  # the two fail=True trials
for result in results:
    if result.error:
        assert result.metrics["epoch"] == 2
    else:
        assert result.metrics["epoch"] == 5
        assert len(result.best_checkpoints) == 2
        assert [m["epoch"] for _, m in result.best_checkpoints] == [4, 5]

experiment_path = os.path.join(storage_path, "train_ns_exp")
assert tune.Tuner.can_restore(experiment_path)
tuner = tune.Tuner.restore(experiment_path, trainable=train_func, resume_errored=True)
results = tuner.get_results()  # before fit: the saved state
assert results.num_errors == 2
results = tuner.fit()
assert not results.errors, results.errors
for result in results:
    assert result.metrics["epoch"] == 5
    with result.checkpoint.as_directory() as d:
        with open(os.path.join(d, "model.json")) as f:
            saved = json.load(f)
    assert saved["epoch"] == 5
    assert saved["model"]["state"] == 5 * result.config["lr"]
best = results.get_best_result(metric="metric", mode="max")
assert best.config["lr"] == 2.0
for lr in (1.0, 2.0):
    os.remove(f"{FLAG}_{lr}")
