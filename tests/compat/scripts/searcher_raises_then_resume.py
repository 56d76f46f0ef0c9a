# mypy: ignore-errors
"""A searcher of the user's raises mid-run; `tune.run(resume="AUTO")` runs
the trial it interrupted again, from its checkpoint.

Follows Ray Tune's Searcher reference (tune/api/doc/ray.tune.search.Searcher:
the subclass with suggest / on_trial_complete / save / restore, behind a
`ConcurrencyLimiter`), the fault-tolerance guide's checkpointing trainable
(tune/tutorials/tune-fault-tolerance.rst) and `tune.run`'s docstring
(`resume="AUTO"` with the same `name` and `storage_path` goes on with the
experiment; `search_alg` is the searcher the experiment resumes with). The
searcher breaks at its third suggestion, which comes when the short trial
ends while the long one is half way: the exception leaves the run, and the
resume runs the long trial on from its last checkpoint and asks the fixed
searcher again. The long trial trains on only once the searcher has broken
(a file says so): a loaded machine can be slow to hand the short trial's
end to the searcher, and the long trial must not finish first.
`TUNE_GLOBAL_CHECKPOINT_S=0` makes Ray Tune write its experiment state at
every step, so what it resumes from is what the run did last.
"""

import json
import os
import pickle
import tempfile
import time

import tunecore as tune
from tunecore.search import ConcurrencyLimiter, Searcher

os.environ["TUNE_GLOBAL_CHECKPOINT_S"] = "0"

EPOCHS = {1: 2, 2: 20, 3: 2}
broken = os.path.abspath("optimizer_broken")
long_trial_half_way = os.path.abspath("long_trial_half_way")
optimizer_raised = os.path.abspath("optimizer_raised")


class ThreeConfigs(Searcher):
    """Suggests x = 1, 2, 3; the third suggestion raises while `broken` exists."""

    def __init__(self, metric="loss", mode="min"):
        super().__init__(metric=metric, mode=mode)
        self.asked = 0

    def suggest(self, trial_id):
        if self.asked == 3:
            return Searcher.FINISHED
        if self.asked == 2 and os.path.exists(broken):
            open(optimizer_raised, "w").close()
            raise RuntimeError("the optimizer broke")
        self.asked += 1
        return {"x": self.asked}

    def on_trial_complete(self, trial_id, result=None, error=False):
        pass

    def save(self, checkpoint_path):
        with open(checkpoint_path, "wb") as f:
            pickle.dump(self.asked, f)

    def restore(self, checkpoint_path):
        with open(checkpoint_path, "rb") as f:
            self.asked = pickle.load(f)


def trainable(config):
    start = 1
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "checkpoint.json")) as f:
                start = json.load(f)["epoch"] + 1
    for epoch in range(start, EPOCHS[config["x"]] + 1):
        if config["x"] == 1 and epoch == 2:
            while not os.path.exists(long_trial_half_way):
                time.sleep(0.05)  # the short trial ends once the long one has a checkpoint
        if config["x"] == 2 and epoch == 3:
            while not os.path.exists(optimizer_raised):
                time.sleep(0.05)  # the long trial is still training when the optimizer breaks
        time.sleep(0.1)  # Do some training...
        with tempfile.TemporaryDirectory() as tmpdir:
            with open(os.path.join(tmpdir, "checkpoint.json"), "w") as f:
                json.dump({"epoch": epoch}, f)
            tune.report(
                {"loss": config["x"] * epoch, "epoch": epoch, "start": start},
                checkpoint=tune.Checkpoint.from_directory(tmpdir),
            )
        if config["x"] == 2 and epoch == 2:
            open(long_trial_half_way, "w").close()


def run(searcher, resume=False):
    return tune.run(
        trainable,
        search_alg=ConcurrencyLimiter(searcher, max_concurrent=2),
        num_samples=3,
        metric="loss",
        mode="min",
        name="searcher_raises",
        storage_path=os.path.abspath("results"),
        resume=resume,
        verbose=0,
    )


open(broken, "w").close()
raised = None
try:
    run(ThreeConfigs())
except Exception as error:  # Ray Tune raises the searcher's own error, tunecore a TuneError
    raised = error
assert raised is not None and "the optimizer broke" in str(raised), raised

os.remove(broken)  # the user fixes the optimizer and resumes
analysis = run(ThreeConfigs(), resume="AUTO")
by_x = {trial.config["x"]: trial for trial in analysis.trials}
print({x: (t.status, t.last_result["epoch"], t.last_result["start"]) for x, t in by_x.items()})
assert sorted(by_x) == [1, 2, 3], by_x
assert all(trial.status == "TERMINATED" for trial in by_x.values())
# The long trial ran again, from a checkpoint it had saved before the searcher broke.
assert by_x[2].last_result["epoch"] == EPOCHS[2], by_x[2].last_result
assert by_x[2].last_result["start"] >= 3, by_x[2].last_result
# The short trial had ended: it did not run again.
assert by_x[1].last_result["start"] == 1, by_x[1].last_result
assert by_x[3].last_result["epoch"] == EPOCHS[3], by_x[3].last_result
