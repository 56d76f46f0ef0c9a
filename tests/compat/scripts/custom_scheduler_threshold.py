# mypy: ignore-errors
"""A scheduler of one's own, as Ray Tune's docs write it.

Follows Ray Tune's "Implementing your own scheduler" (the `TrialScheduler`
API reference: subclass `FIFOScheduler`, override `on_trial_result(self,
tune_controller, trial, result)` and return `TrialScheduler.CONTINUE`,
`PAUSE` or `STOP`): trials whose accuracy is below a threshold after a
grace period are stopped. The scheduler also hears each trial added and
completed, and `super()` gives FIFO's choice of what runs next.
"""

import tunecore as tune
from tunecore.schedulers import FIFOScheduler, TrialScheduler


class ThresholdScheduler(FIFOScheduler):
    def __init__(self, metric="mean_accuracy", threshold=0.5, grace_period=3):
        super().__init__()
        self.metric_name = metric
        self.threshold = threshold
        self.grace_period = grace_period
        self.added = []
        self.completed = {}

    def on_trial_add(self, tune_controller, trial):
        self.added.append(trial.trial_id)

    def on_trial_result(self, tune_controller, trial, result):
        if result["training_iteration"] < self.grace_period:
            return TrialScheduler.CONTINUE
        if result[self.metric_name] < self.threshold:
            return TrialScheduler.STOP
        return TrialScheduler.CONTINUE

    def on_trial_complete(self, tune_controller, trial, result):
        self.completed[trial.config["lr"]] = result["training_iteration"]

    def choose_trial_to_run(self, tune_controller):
        return super().choose_trial_to_run(tune_controller)


def train_fn(config):
    accuracy = 0.0
    for _step in range(10):
        accuracy += config["lr"]  # a stand-in for one epoch of training
        tune.report({"mean_accuracy": accuracy})


scheduler = ThresholdScheduler(threshold=0.5, grace_period=3)
tuner = tune.Tuner(
    train_fn,
    param_space={"lr": tune.grid_search([0.05, 0.1, 0.2, 0.3])},
    tune_config=tune.TuneConfig(metric="mean_accuracy", mode="max", scheduler=scheduler),
)
results = tuner.fit()

assert not results.errors
iterations = {r.config["lr"]: r.metrics["training_iteration"] for r in results}
# 0.05 * 3 and 0.1 * 3 are below 0.5 at the grace period; 0.2 reaches it at 3
# (0.6), 0.3 at once: those two run all 10 epochs.
assert iterations == {0.05: 3, 0.1: 3, 0.2: 10, 0.3: 10}, iterations
assert len(scheduler.added) == 4
assert scheduler.completed == iterations, scheduler.completed
print("Stopped early:", sorted(lr for lr, n in iterations.items() if n < 10))
