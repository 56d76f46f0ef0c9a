# mypy: ignore-errors
# timeout: 180
"""`Tuner.restore(..., restart_errored=True)`: an errored trial starts over.

Follows Ray Tune's "How to Enable Fault Tolerance in Ray Tune" guide
(tutorials/tune-fault-tolerance.md, "Restore Configurations":
`resume_errored` resumes an errored trial from its latest checkpoint,
`restart_errored` restarts it from scratch, `resume_unfinished`), with
a function trainable checkpointing every step and failing once at step 3.
"""

import json
import os
import tempfile

import tunecore as tune

FLAGS = os.path.abspath("flags")
os.makedirs(FLAGS, exist_ok=True)


def trainable(config):
    start = 1
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as d:
            start = json.load(open(os.path.join(d, "state.json")))["step"] + 1
    for step in range(start, 6):
        flag = os.path.join(FLAGS, str(config["id"]))
        if step == 3 and config["id"] == 1 and not os.path.exists(flag):
            open(flag, "w").close()
            raise RuntimeError("fails once at step 3")
        with tempfile.TemporaryDirectory() as d:
            json.dump({"step": step}, open(os.path.join(d, "state.json"), "w"))
            tune.report(
                {"step": step, "start": start}, checkpoint=tune.Checkpoint.from_directory(d)
            )


storage_path = os.path.abspath("results")
tuner = tune.Tuner(
    trainable,
    param_space={"id": tune.grid_search([0, 1])},
    run_config=tune.RunConfig(name="restart_exp", storage_path=storage_path),
)
results = tuner.fit()
assert results.num_errors == 1 and results.num_terminated == 1
errored = next(r for r in results if r.error)
assert errored.metrics["step"] == 2

path = os.path.join(storage_path, "restart_exp")
tuner = tune.Tuner.restore(path, trainable=trainable, restart_errored=True)
results = tuner.fit()
assert not results.errors, results.errors
by_id = {r.config["id"]: r.metrics for r in results}
# Restarted from scratch: its last result counts from step 1 again.
assert by_id[1]["step"] == 5 and by_id[1]["start"] == 1, by_id[1]
assert by_id[0]["step"] == 5 and by_id[0]["start"] == 1, by_id[0]

# The same failure resumed instead: from the step-2 checkpoint.
os.remove(os.path.join(FLAGS, "1"))
tuner = tune.Tuner(
    trainable,
    param_space={"id": tune.grid_search([0, 1])},
    run_config=tune.RunConfig(name="resume_exp", storage_path=storage_path),
)
assert tuner.fit().num_errors == 1
tuner = tune.Tuner.restore(
    os.path.join(storage_path, "resume_exp"),
    trainable=trainable,
    resume_unfinished=True,
    resume_errored=True,
)
results = tuner.fit()
assert not results.errors
by_id = {r.config["id"]: r.metrics for r in results}
assert by_id[1]["step"] == 5 and by_id[1]["start"] == 3, by_id[1]
