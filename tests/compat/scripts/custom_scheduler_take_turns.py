# mypy: ignore-errors
"""A scheduler of one's own that pauses trials and chooses which runs next.

Follows Ray Tune's `TrialScheduler` API ("Implementing your own
scheduler"): `on_trial_result` returns `TrialScheduler.PAUSE` to put a
trial aside (Tune checkpoints it), and `choose_trial_to_run(tune_controller)`
returns one of `tune_controller.get_trials()` that is PENDING or PAUSED, or
None. Here trials take turns, each asking for the whole cluster: each
trains two epochs, then the paused trial that trained least goes next.
The trainable checkpoints as Ray's docs show, so a paused trial resumes
where it was.
"""

import json
import os
import tempfile

import ray

import tunecore as tune
from tunecore.experiment import Trial
from tunecore.schedulers import FIFOScheduler, TrialScheduler


class TakeTurnsScheduler(FIFOScheduler):
    def __init__(self, epochs_per_turn=2):
        super().__init__()
        self.epochs_per_turn = epochs_per_turn
        self.trained = {}
        self.turns = []

    def on_trial_result(self, tune_controller, trial, result):
        epochs = result["training_iteration"]
        self.trained[trial.trial_id] = epochs
        if epochs % self.epochs_per_turn == 0:
            self.turns.append((trial.config["lr"], epochs))
            return TrialScheduler.PAUSE
        return TrialScheduler.CONTINUE

    def choose_trial_to_run(self, tune_controller):
        for trial in tune_controller.get_trials():
            if trial.status == Trial.PENDING:
                return trial
        paused = [t for t in tune_controller.get_trials() if t.status == Trial.PAUSED]
        if not paused:
            return None
        return min(paused, key=lambda t: self.trained.get(t.trial_id, 0))


def train_fn(config):
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "state.json")) as f:
                start = json.load(f)["epoch"]
    for epoch in range(start, 4):
        with tempfile.TemporaryDirectory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "state.json"), "w") as f:
                json.dump({"epoch": epoch + 1}, f)
            tune.report(
                {"loss": config["lr"] / (epoch + 1)},
                checkpoint=tune.Checkpoint.from_directory(checkpoint_dir),
            )


ray.init()
cpus = ray.cluster_resources()["CPU"]
scheduler = TakeTurnsScheduler(epochs_per_turn=2)
tuner = tune.Tuner(
    tune.with_resources(train_fn, {"cpu": cpus}),  # one trial at a time
    param_space={"lr": tune.grid_search([0.1, 0.2, 0.3])},
    tune_config=tune.TuneConfig(metric="loss", mode="min", scheduler=scheduler),
)
results = tuner.fit()

assert not results.errors
assert [r.metrics["training_iteration"] for r in results] == [4, 4, 4]
# Each trains its first turn in the order added, then the least trained goes next.
assert scheduler.turns == [(0.1, 2), (0.2, 2), (0.3, 2), (0.1, 4), (0.2, 4), (0.3, 4)], (
    scheduler.turns
)
print("Turns:", scheduler.turns)
