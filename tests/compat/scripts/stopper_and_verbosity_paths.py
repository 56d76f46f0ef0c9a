# mypy: ignore-errors
"""Stoppers and verbosity levels imported from the modules that define them.

Follows Ray Tune's "How to Define Stopping Criteria" guide
(tune/tutorials/tune-stopping.rst) and its API reference (tune/api/stoppers.rst),
importing each stopper from its own module as Ray's API reference names
them (`ray.tune.stopper.maximum_iteration`, `.trial_plateau`, `.timeout`,
`.stopper`), with verbosity given by name: `ray.tune.utils.log.Verbosity`
for `tune.run`, `ray.tune.experimental.output.AirVerbosity` for `RunConfig`,
and the configs imported from `ray.air.config` as Ray 2.x scripts did.
"""

import tunecore as tune
from tunecore.config import CheckpointConfig, RunConfig
from tunecore.experimental.output import AirVerbosity
from tunecore.stopper.maximum_iteration import MaximumIterationStopper
from tunecore.stopper.stopper import CombinedStopper, Stopper
from tunecore.stopper.timeout import TimeoutStopper
from tunecore.stopper.trial_plateau import TrialPlateauStopper
from tunecore.utils.log import Verbosity


def my_trainable(config):
    i = 1
    while True:
        # Do some training, and report some metrics for demonstration...
        tune.report({"mean_accuracy": min(i / 10, config["cap"])})
        i += 1


stopper = CombinedStopper(
    MaximumIterationStopper(max_iter=10),
    TrialPlateauStopper(metric="mean_accuracy", std=0.001, num_results=3, grace_period=3),
    TimeoutStopper(timeout=600),
)
assert isinstance(stopper, Stopper)

tuner = tune.Tuner(
    my_trainable,
    param_space={"cap": tune.grid_search([0.3, 1.0])},
    run_config=RunConfig(
        stop=stopper,
        verbose=AirVerbosity.SILENT,
        checkpoint_config=CheckpointConfig(checkpoint_at_end=False),
    ),
)
result_grid = tuner.fit()
iterations = sorted(r.metrics["training_iteration"] for r in result_grid)
# cap 0.3: flat from iteration 3 on, a plateau after three flat results;
# cap 1.0: still rising at 10, where MaximumIterationStopper stops it.
assert iterations == [5, 10], iterations

analysis = tune.run(
    my_trainable,
    config={"cap": 1.0},
    stop=MaximumIterationStopper(max_iter=4),
    verbose=Verbosity.V0_MINIMAL,
)
assert analysis.trials[0].last_result["training_iteration"] == 4
