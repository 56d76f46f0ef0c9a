# mypy: ignore-errors
# timeout: 180
"""What stoppers hear when a function trainable returns: its last result
once more, marked done.

Follows Ray Tune's "How to Define Stopping Criteria" guide
(doc/source/tune/doc_code/stopping.py: a `Stopper` class, a stop
function). Ray Tune 2.60's controller hands a function trainable's end to
the stopper as the trial's last result again, with `done=True`
(`TuneController._process_trial_result`, the `RESULT_DUPLICATE` branch),
and then stops the trial: the callbacks do not hear it again. A class
trainable ends on a result that says `done`, with no repeat. Every number
asserted here is what Ray Tune 2.60 gives (`tests/compat/on_ray_tune.py`);
`stopping_plateau_when_a_function_returns.py` has what that does to
`ExperimentPlateauStopper`, and stop dicts.
"""

import os

import tunecore as tune
from tunecore import Callback, Stopper

heard = []


def my_trainable(config):
    for step in range(1, 4):
        tune.report({"loss": float(step) + config["x"]})


class CountingStopper(Stopper):
    def __call__(self, trial_id, result):
        heard.append((result["training_iteration"], result["done"], result["loss"]))
        return False

    def stop_all(self):
        return False


class CountingCallback(Callback):
    def __init__(self):
        self.results = 0

    def on_trial_result(self, iteration, trials, trial, result, **info):
        self.results += 1


callback = CountingCallback()
tuner = tune.Tuner(
    my_trainable,
    param_space={"x": tune.grid_search([0.0, 10.0])},
    tune_config=tune.TuneConfig(max_concurrent_trials=1),
    run_config=tune.RunConfig(stop=CountingStopper(), callbacks=[callback]),
)
results = tuner.fit()
assert not results.errors
# Three results, then the end: the last result again, done.
assert heard == [
    (1, False, 1.0),
    (2, False, 2.0),
    (3, False, 3.0),
    (3, True, 3.0),
    (1, False, 11.0),
    (2, False, 12.0),
    (3, False, 13.0),
    (3, True, 13.0),
], heard
assert callback.results == 6
assert [(r.metrics["training_iteration"], r.metrics["done"]) for r in results] == [(3, True)] * 2


# A stop function hears the same.
heard.clear()


def stop_fn(trial_id, result):
    heard.append((result["training_iteration"], result["done"], result["loss"]))
    return False


results = tune.Tuner(
    my_trainable,
    param_space={"x": tune.grid_search([0.0, 10.0])},
    tune_config=tune.TuneConfig(max_concurrent_trials=1),
    run_config=tune.RunConfig(stop=stop_fn),
).fit()
assert not results.errors
assert [h[:2] for h in heard] == [(1, False), (2, False), (3, False), (3, True)] * 2, heard


# A class trainable that says done: its last result is heard once.
heard.clear()


class MyTrainable(tune.Trainable):
    def setup(self, config):
        self.x = config["x"]
        self.steps = 0

    def step(self):
        self.steps += 1
        return {"loss": float(self.steps) + self.x, "done": self.steps >= 3}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "steps"), "w") as f:
            f.write(str(self.steps))

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "steps")) as f:
            self.steps = int(f.read())


results = tune.Tuner(
    MyTrainable,
    param_space={"x": tune.grid_search([0.0])},
    run_config=tune.RunConfig(stop=CountingStopper()),
).fit()
assert not results.errors
assert [h[:2] for h in heard] == [(1, False), (2, False), (3, True)], heard
