# mypy: ignore-errors
"""Stopping trials with a dict of criteria and with a function.

Follows Ray Tune's "How to Define Stopping Criteria" guide,
doc/source/tune/doc_code/stopping.py (__stopping_dict__, __stopping_fn__),
whose own assertions are kept.
"""

import tunecore as tune


def my_trainable(config):
    i = 1
    # Training won't finish unless one of the stopping criteria is met!
    while True:
        # Do some training, and report some metrics for demonstration...
        tune.report({"mean_accuracy": min(i / 10, 1.0)})
        i += 1


tuner = tune.Tuner(
    my_trainable,
    run_config=tune.RunConfig(stop={"training_iteration": 10, "mean_accuracy": 0.8}),
)
result_grid = tuner.fit()

final_iter = result_grid[0].metrics["training_iteration"]
assert final_iter == 8, final_iter


def stop_fn(trial_id: str, result: dict) -> bool:
    return result["mean_accuracy"] >= 0.8 or result["training_iteration"] >= 10


tuner = tune.Tuner(my_trainable, run_config=tune.RunConfig(stop=stop_fn))
result_grid = tuner.fit()

final_iter = result_grid[0].metrics["training_iteration"]
assert final_iter == 8, final_iter
assert not result_grid.errors
