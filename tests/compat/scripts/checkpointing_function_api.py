# mypy: ignore-errors
"""Function-API checkpointing: save from a temp dir, resume, keep N.

Follows Ray Tune's "How to Save and Load Trial Checkpoints" guide,
doc/source/tune/doc_code/trial_checkpoint.py
(__function_api_checkpointing_from_dir__, __function_api_checkpointing_periodic__),
with json instead of torch.
"""

import json
import os
import tempfile

import tunecore as tune
from tunecore import Checkpoint


class MyModel:
    def __init__(self):
        self.weights = {"w": 0}

    def state_dict(self) -> dict:
        return dict(self.weights)

    def load_state_dict(self, state_dict):
        self.weights = dict(state_dict)


def train_func(config):
    start = 1
    my_model = MyModel()

    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "checkpoint.json")) as f:
                checkpoint_dict = json.load(f)
            start = checkpoint_dict["epoch"] + 1
            my_model.load_state_dict(checkpoint_dict["model_state"])

    for epoch in range(start, config["epochs"] + 1):
        # Model training here
        my_model.weights["w"] += 1

        metrics = {"metric": my_model.weights["w"]}
        with tempfile.TemporaryDirectory() as tempdir:
            with open(os.path.join(tempdir, "checkpoint.json"), "w") as f:
                json.dump({"epoch": epoch, "model_state": my_model.state_dict()}, f)
            tune.report(metrics=metrics, checkpoint=Checkpoint.from_directory(tempdir))


tuner = tune.Tuner(train_func, param_space={"epochs": 5})
result_grid = tuner.fit()

assert not result_grid.errors
result = result_grid[0]
assert result.metrics["training_iteration"] == 5
# The latest checkpoint holds what the last report saved, and is readable
# after the temporary directory is gone.
with result.checkpoint.as_directory() as checkpoint_dir:
    with open(os.path.join(checkpoint_dir, "checkpoint.json")) as f:
        assert json.load(f) == {"epoch": 5, "model_state": {"w": 5}}

NUM_EPOCHS = 12
# checkpoint every three epochs.
CHECKPOINT_FREQ = 3


def train_func(config):
    for epoch in range(1, config["epochs"] + 1):
        # Model training here
        # ...

        # Report metrics and save a checkpoint
        metrics = {"metric": epoch}
        if epoch % CHECKPOINT_FREQ == 0:
            with tempfile.TemporaryDirectory() as tempdir:
                # Save a checkpoint in tempdir.
                with open(os.path.join(tempdir, "epoch.txt"), "w") as f:
                    f.write(str(epoch))
                tune.report(metrics, checkpoint=Checkpoint.from_directory(tempdir))
        else:
            tune.report(metrics)


tuner = tune.Tuner(train_func, param_space={"epochs": NUM_EPOCHS})
result_grid = tuner.fit()

assert not result_grid.errors
assert len(result_grid[0].best_checkpoints) == NUM_EPOCHS // CHECKPOINT_FREQ
# Each checkpoint comes with the metrics reported along with it.
epochs = sorted(metrics["metric"] for _, metrics in result_grid[0].best_checkpoints)
assert epochs == [3, 6, 9, 12], epochs

# CheckpointConfig(num_to_keep=...) keeps only the best ones.
tuner = tune.Tuner(
    train_func,
    param_space={"epochs": NUM_EPOCHS},
    run_config=tune.RunConfig(
        checkpoint_config=tune.CheckpointConfig(
            num_to_keep=2, checkpoint_score_attribute="metric", checkpoint_score_order="max"
        )
    ),
)
result_grid = tuner.fit()
epochs = sorted(metrics["metric"] for _, metrics in result_grid[0].best_checkpoints)
assert epochs == [9, 12], epochs
