# mypy: ignore-errors
"""Metadata stored with a reported checkpoint, read back from the result.

Follows Ray's `Checkpoint` reference (train/api/doc/ray.train.Checkpoint:
`set_metadata`, `update_metadata`, `get_metadata`, kept in the checkpoint's
directory and travelling with it).
"""

import os
import tempfile

import tunecore as tune


def train_fn(config):
    for epoch in range(1, 4):
        with tempfile.TemporaryDirectory() as directory:
            with open(os.path.join(directory, "model.txt"), "w") as f:
                f.write(f"weights at epoch {epoch}")
            checkpoint = tune.Checkpoint.from_directory(directory)
            checkpoint.set_metadata({"epoch": epoch})
            checkpoint.update_metadata({"lr": config["lr"]})
            tune.report({"loss": 1.0 / epoch}, checkpoint=checkpoint)


results = tune.Tuner(
    train_fn,
    param_space={"lr": tune.grid_search([0.1, 0.01])},
    tune_config=tune.TuneConfig(metric="loss", mode="min"),
).fit()

assert not results.errors
for result in results:
    assert result.checkpoint.get_metadata() == {"epoch": 3, "lr": result.config["lr"]}
    with result.checkpoint.as_directory() as directory:
        with open(os.path.join(directory, "model.txt")) as f:
            assert f.read() == "weights at epoch 3"
