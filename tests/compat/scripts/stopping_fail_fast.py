# mypy: ignore-errors
"""Stop the whole experiment on the first trial error (fail_fast=True).

Follows Ray Tune's "How to Define Stopping Criteria" guide,
doc/source/tune/doc_code/stopping.py (__stopping_on_trial_error__). The
guide's other trial trains for a while and relies on the failing one
failing first; here it starts its training only once the failing trial
has raised (a file says so), so on a loaded machine, where one trial's
worker can start seconds after the other's, it still cannot report first.
"""

import os
import time

import tunecore as tune

failed = os.path.abspath("failed")


def my_failing_trainable(config):
    if config["should_fail"]:
        open(failed, "w").close()
        raise RuntimeError("Failing (on purpose)!")
    while not os.path.exists(failed):
        time.sleep(0.05)  # wait for the other trial to fail
    # Do some training...
    time.sleep(10)
    tune.report({"mean_accuracy": 0.9})


tuner = tune.Tuner(
    my_failing_trainable,
    param_space={"should_fail": tune.grid_search([True, False])},
    run_config=tune.RunConfig(failure_config=tune.FailureConfig(fail_fast=True)),
)
result_grid = tuner.fit()

assert len(result_grid) == 2
for result in result_grid:
    # Should never get to report
    final_iter = result.metrics.get("training_iteration")
    assert not final_iter, final_iter
assert result_grid.num_errors == 1
failed_results = [r for r in result_grid if r.error is not None]
assert failed_results[0].config["should_fail"] is True
assert "Failing (on purpose)!" in str(failed_results[0].error)
