# mypy: ignore-errors
"""What stoppers hear when a function trainable returns: its last result
once more, marked done.

Follows Ray Tune's "How to Define Stopping Criteria" guide
(doc/source/tune/doc_code/stopping.py: a `Stopper` class, a stop function,
a stop dict) and the Stopper API page (tune/api/stoppers.rst:
`ExperimentPlateauStopper`). Ray Tune 2.60's controller hands a function
trainable's end to the stopper as the trial's last result again, with
`done=True` (`TuneController._process_trial_result`, the `RESULT_DUPLICATE`
branch), and then stops the trial: the callbacks do not hear it again. A
class trainable ends on a result that says `done`, with no repeat. Every
number asserted here is what Ray Tune 2.60 gives (`tests/compat/on_ray_tune.py`).
"""

import os

import tunecore as tune
from tunecore import Callback, Stopper
from tunecore.stopper import ExperimentPlateauStopper

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


# A trial stopped on a result never returns: nothing more is heard.
heard.clear()
results = tune.Tuner(
    my_trainable,
    param_space={"x": tune.grid_search([0.0])},
    run_config=tune.RunConfig(stop=lambda trial_id, result: stop_fn(trial_id, result) or True),
).fit()
assert [h[:2] for h in heard] == [(1, False)], heard
assert results[0].metrics["training_iteration"] == 1


# A stop dict: the criterion ends a trial on its result; one that is never
# reached lets the function return.
for limit, last in ((2, 2), (5, 3)):
    results = tune.Tuner(
        my_trainable,
        param_space={"x": tune.grid_search([0.0])},
        run_config=tune.RunConfig(stop={"training_iteration": limit}),
    ).fit()
    assert (results[0].metrics["training_iteration"], results[0].metrics["done"]) == (last, True)


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


# The best losses plateau: with `top=2`, the first trial's best loss, heard
# twice as the function returns, is a plateau (std 0), and the experiment
# stops after that trial.
def falling(config):
    for step in range(1, 9):
        tune.report({"loss": 1.0 / step + 0.01 * config["b"]})


results = tune.Tuner(
    falling,
    param_space={"b": tune.grid_search([1, 2, 3, 4])},
    tune_config=tune.TuneConfig(max_concurrent_trials=1),
    run_config=tune.RunConfig(
        stop=ExperimentPlateauStopper("loss", std=0.0001, top=2, mode="min", patience=1)
    ),
).fit()
assert not results.errors
ran = [r for r in results if r.metrics.get("training_iteration")]
assert [(r.config["b"], r.metrics["training_iteration"]) for r in ran] == [(1, 8)], ran
