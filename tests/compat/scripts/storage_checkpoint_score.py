# mypy: ignore-errors
"""Checkpoints kept by a metric named "max-auc", as Ray's storage guide
names it: the five best by it, not the five newest.

Follows "Example: Running Tune with cloud storage" in Ray Tune 2.60's
doc/source/tune/tutorials/tune-storage.md (`CheckpointConfig(
checkpoint_score_attribute="max-auc", checkpoint_score_order="max",
num_to_keep=5)`, "the highest AUC scores, a metric reported by the
trainable"), made runnable: a local directory for the S3 bucket, a
trainable reporting "max-auc" with a checkpoint at each of 8 iterations,
and the restore of the guide's next block. Ray Tune 2.60 takes the
attribute as written; tunecore read "max-" as the order and ranked by a
metric "auc" nobody reported, keeping the newest five, until 3ba0ebd.
"""

import os
import tempfile

import tunecore as tune

SCORES = [0, 2, 4, 1, 3, 0, 2, 1]


def my_trainable(config):
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as directory:
            start = int(open(os.path.join(directory, "it")).read())
    for i in range(start, len(SCORES)):
        with tempfile.TemporaryDirectory() as directory:
            open(os.path.join(directory, "it"), "w").write(str(i + 1))
            checkpoint = tune.Checkpoint.from_directory(directory)
            tune.report({"max-auc": SCORES[i]}, checkpoint=checkpoint)


storage = os.path.abspath("my-checkpoints-bucket/path/")
tuner = tune.Tuner(
    my_trainable,
    run_config=tune.RunConfig(
        name="my-tune-exp",
        storage_path=storage,
        checkpoint_config=tune.CheckpointConfig(
            checkpoint_score_attribute="max-auc",
            checkpoint_score_order="max",
            num_to_keep=5,
        ),
    ),
)
results = tuner.fit()
kept = sorted(metrics["max-auc"] for _, metrics in results[0].best_checkpoints)
assert kept == [1, 2, 2, 3, 4], kept

tuner = tune.Tuner.restore(
    os.path.join(storage, "my-tune-exp"), trainable=my_trainable, resume_errored=True
)
restored = tuner.fit()
assert restored[0].metrics["training_iteration"] == len(SCORES)
