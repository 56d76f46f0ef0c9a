# mypy: ignore-errors
# timeout: 180
"""A custom `storage_filesystem`, and the experiment restored by its path
inside it.

Follows Ray Tune's "How to Configure Persistent Storage" guide
(doc/source/tune/tutorials/tune-storage.md): `RunConfig(storage_filesystem=
fs, storage_path="bucket-path", name=...)` with a pyarrow filesystem (here
a `SubTreeFileSystem` over a local directory, standing in for the guide's
S3 one), checkpoints kept by score, then, as the fault-tolerance guide
restores, `Tuner.can_restore` and `Tuner.restore(path, trainable=...,
storage_filesystem=fs)` with `path` the experiment's path inside `fs`.
Ray Tune 2.60 gives every outcome asserted here (`tests/compat/on_ray_tune.py`).
"""

import json
import os
import tempfile

import pyarrow.fs

import tunecore as tune
from tunecore import Checkpoint, CheckpointConfig, RunConfig, Tuner

root = os.path.abspath("bucket")
os.makedirs(root, exist_ok=True)
fs = pyarrow.fs.SubTreeFileSystem(root, pyarrow.fs.LocalFileSystem())


def train_fn(config):
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "state.json")) as f:
                start = json.load(f)["step"] + 1
    for step in range(start, 5):
        if config["fail"] and step == 3 and not checkpoint:
            raise RuntimeError("Failing (on purpose)!")
        score = 100.0 if step == 2 else float(config["x"] * step)
        with tempfile.TemporaryDirectory() as temp_dir:
            with open(os.path.join(temp_dir, "state.json"), "w") as f:
                json.dump({"step": step}, f)
            tune.report(
                {"score": score, "step": step, "started_at": start},
                checkpoint=Checkpoint.from_directory(temp_dir),
            )


tuner = Tuner(
    train_fn,
    param_space={
        "x": tune.grid_search([1, 2]),
        "fail": tune.sample_from(lambda spec: spec.config.x == 2),
    },
    tune_config=tune.TuneConfig(metric="score", mode="max"),
    run_config=RunConfig(
        storage_filesystem=fs,
        storage_path="experiments",
        name="storage_guide",
        checkpoint_config=CheckpointConfig(
            num_to_keep=2, checkpoint_score_attribute="score", checkpoint_score_order="max"
        ),
    ),
)
results = tuner.fit()
assert results.num_errors == 1, results.errors
# Written inside the filesystem, nowhere else.
assert os.path.isdir(os.path.join(root, "experiments", "storage_guide"))
assert not os.path.exists("experiments")
ok = [r for r in results if r.error is None]
assert [r.config["x"] for r in ok] == [1]
assert isinstance(ok[0].filesystem, pyarrow.fs.SubTreeFileSystem)
# The two best by score are kept: steps 2 (score 100) and 4.
assert sorted(metrics["step"] for _, metrics in ok[0].best_checkpoints) == [2, 4]
with ok[0].checkpoint.as_directory() as checkpoint_dir:
    with open(os.path.join(checkpoint_dir, "state.json")) as f:
        assert json.load(f) == {"step": 4}

path = "experiments/storage_guide"
assert tune.Tuner.can_restore(path, storage_filesystem=fs)
tuner = tune.Tuner.restore(path, trainable=train_fn, storage_filesystem=fs, resume_errored=True)
restored = tuner.fit()
assert restored.num_errors == 0, restored.errors
by_x = {r.config["x"]: r.metrics for r in restored}
assert by_x[1]["step"] == 4 and by_x[1]["started_at"] == 0
assert by_x[2]["step"] == 4 and by_x[2]["started_at"] == 3, by_x[2]
assert not os.path.exists("experiments")
