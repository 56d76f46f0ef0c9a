# mypy: ignore-errors
"""Stopping trials, and the whole experiment, by time.

Follows Ray Tune's "How to Define Stopping Criteria" guide,
doc/source/tune/doc_code/stopping.py (__stopping_trials_by_time__,
__stopping_experiment_by_time__), with a shorter step and budget.
"""

import time

import tunecore as tune


def my_trainable(config):
    i = 1
    while True:
        time.sleep(0.1)
        # Do some training, and report some metrics for demonstration...
        tune.report({"mean_accuracy": min(i / 10, 1.0)})
        i += 1


tuner = tune.Tuner(
    my_trainable,
    # Stop a trial after it's run for more than 1 second.
    run_config=tune.RunConfig(stop={"time_total_s": 1}),
)
result_grid = tuner.fit()

# Should only get ~10 reports
assert not result_grid.errors
assert result_grid[0].metrics["training_iteration"] < 15
assert result_grid[0].metrics["time_total_s"] >= 1

# Stop the entire experiment after it has run for more than 3 seconds.
tuner = tune.Tuner(my_trainable, tune_config=tune.TuneConfig(time_budget_s=3.0))
result_grid = tuner.fit()

# Should only get ~30 reports, fewer for the time it takes to start (none
# on a machine too loaded to start the trial within the budget: CI once
# saw that, at a load average of 30 on two cores)
assert not result_grid.errors
assert result_grid[0].metrics.get("training_iteration", 0) < 35
