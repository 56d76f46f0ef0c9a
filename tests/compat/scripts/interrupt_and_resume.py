# mypy: ignore-errors
# timeout: 300
"""Ctrl-C stops a run; Tuner.restore goes on with the unfinished trials.

Follows Ray Tune's "How to Enable Fault Tolerance in Ray Tune" guide
(tune/tutorials/tune-fault-tolerance.rst: an experiment interrupted with
Ctrl+C is resumed with Tuner.restore(path, trainable=...), which by default
resumes the unfinished trials from their latest checkpoints), using
doc/source/tune/doc_code/fault_tolerance.py's trainable.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import tunecore as tune

NUM_EPOCHS = 30


def trainable(config):
    # Checkpoint loading
    checkpoint = tune.get_checkpoint()
    start = 1
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "checkpoint.json")) as f:
                start = json.load(f)["epoch"] + 1

    for epoch in range(start, NUM_EPOCHS + 1):
        time.sleep(0.1)  # Do some training...

        # Checkpoint saving
        with tempfile.TemporaryDirectory() as tmpdir:
            with open(os.path.join(tmpdir, "checkpoint.json"), "w") as f:
                json.dump({"epoch": epoch}, f)
            tune.report({"epoch": epoch}, checkpoint=tune.Checkpoint.from_directory(tmpdir))


storage_path = os.path.expanduser("~/ray_results")
path = os.path.join(storage_path, "interrupted_run")

if "--first-run" in sys.argv:
    # The run as the user started it from a terminal.
    tuner = tune.Tuner(
        trainable,
        param_space={"x": tune.grid_search([1, 2])},
        run_config=tune.RunConfig(storage_path=storage_path, name="interrupted_run"),
    )
    tuner.fit()
    sys.exit(0)


def reported_epochs():
    """Checkpoints written so far, per trial: one for each epoch reported."""
    counts = []
    for _root, dirs, _ in os.walk(path):
        checkpoints = [d for d in dirs if d.startswith("checkpoint_")]
        if checkpoints:
            counts.append(len(checkpoints))
        dirs[:] = [d for d in dirs if not d.startswith("checkpoint_")]
    return counts


first_run = subprocess.Popen([sys.executable, __file__, "--first-run"])
# Press Ctrl-C once both trials have reported a couple of epochs.
deadline = time.monotonic() + 240
while not (len(reported_epochs()) == 2 and min(reported_epochs()) >= 2):
    assert first_run.poll() is None, "the first run ended before it was interrupted"
    assert time.monotonic() < deadline, "the first run reported nothing"
    time.sleep(0.05)
first_run.send_signal(signal.SIGINT)
first_run.wait(timeout=240)
interrupted_at = reported_epochs()
assert max(interrupted_at) < NUM_EPOCHS, interrupted_at

assert tune.Tuner.can_restore(path)
results = tune.Tuner.restore(path, trainable=trainable).fit()

assert len(results) == 2
assert not results.errors
for result in results:
    # Each trial went on from its checkpoint to the last epoch.
    assert result.metrics["epoch"] == NUM_EPOCHS
    assert result.metrics["training_iteration"] == NUM_EPOCHS
