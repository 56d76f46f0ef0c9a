# mypy: ignore-errors
"""Built-in stoppers combined: a maximum iteration and a plateau.

Follows Ray Tune's "How to Define Stopping Criteria" guide
(tune/tutorials/tune-stopping.rst, "Stopping with a class": CombinedStopper,
MaximumIterationStopper, TrialPlateauStopper) and the Stopper API page
(tune/api/stoppers.rst).
"""

import tunecore as tune
from tunecore.stopper import (
    CombinedStopper,
    MaximumIterationStopper,
    TrialPlateauStopper,
)


def my_trainable(config):
    i = 1
    while True:
        # A flat curve plateaus at once, a rising one never does.
        my_metric = 1.0 if config["flat"] else float(i)
        tune.report({"my_metric": my_metric})
        i += 1


stopper = CombinedStopper(
    MaximumIterationStopper(max_iter=10),
    TrialPlateauStopper(metric="my_metric"),
)

tuner = tune.Tuner(
    my_trainable,
    param_space={"flat": tune.grid_search([True, False])},
    run_config=tune.RunConfig(stop=stopper),
)
result_grid = tuner.fit()

assert len(result_grid) == 2
assert not result_grid.errors
iterations = {r.config["flat"]: r.metrics["training_iteration"] for r in result_grid}
# The rising curve ran until the maximum iteration.
assert iterations[False] == 10, iterations
# The flat curve stopped as soon as its plateau was seen (default
# num_results=4, grace_period=4), well before the maximum.
assert iterations[True] == 4, iterations
