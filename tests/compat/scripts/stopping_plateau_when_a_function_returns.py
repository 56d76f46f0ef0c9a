# mypy: ignore-errors
# timeout: 180
"""The best results plateau once a function trainable's end is heard, and
stops end a trial before its function returns.

Follows Ray Tune's Stopper API page (tune/api/stoppers.rst:
`ExperimentPlateauStopper`) and the "How to Define Stopping Criteria"
guide (doc/source/tune/doc_code/stopping.py: a stop function, a stop
dict). Ray Tune 2.60's controller hands a function trainable's end to the
stopper as the trial's last result again, with `done=True`
(`TuneController._process_trial_result`, the `RESULT_DUPLICATE` branch):
`ExperimentPlateauStopper(top=2)` then sees the first trial's best loss
twice and stops the experiment after that trial (docs/ray-examples.md,
row 165). Every outcome asserted here is what Ray Tune 2.60 gives
(`tests/compat/on_ray_tune.py`); `stopping_when_a_function_returns.py`
counts what the stoppers hear.
"""

import tunecore as tune
from tunecore.stopper import ExperimentPlateauStopper

heard = []


def my_trainable(config):
    for step in range(1, 4):
        tune.report({"loss": float(step) + config["x"]})


def stop_fn(trial_id, result):
    heard.append((result["training_iteration"], result["done"], result["loss"]))
    return False


# A trial stopped on a result never returns: nothing more is heard.
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
