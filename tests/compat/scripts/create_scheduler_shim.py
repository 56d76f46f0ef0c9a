# mypy: ignore-errors
"""The trial scheduler chosen by name, as from a command-line option.

Follows "Shim Instantiation (tune.create_scheduler)" in Ray Tune's Trial
Schedulers reference (tune/api/schedulers.rst, and create_scheduler's
docstring: `scheduler = tune.create_scheduler('pbt', **pbt_kwargs)`;
keyword arguments the chosen class does not take are dropped). 4 samples
of 8 iterations per scheduler.
"""

import argparse

import tunecore as tune
from tunecore.schedulers import (
    AsyncHyperBandScheduler,
    FIFOScheduler,
    MedianStoppingRule,
    PopulationBasedTraining,
)


def trainable(config):
    for step in range(1, 9):
        tune.report({"loss": (config["x"] - 1) ** 2 / step})


parser = argparse.ArgumentParser()
parser.add_argument(
    "--schedulers", nargs="+", default=["fifo", "async_hyperband", "MedianStopping", "pbt"]
)
args = parser.parse_args()

expected = {
    "fifo": FIFOScheduler,
    "async_hyperband": AsyncHyperBandScheduler,
    "medianstopping": MedianStoppingRule,
    "pbt": PopulationBasedTraining,
}
for name in args.schedulers:
    # `max_t` is AsyncHyperBandScheduler's, `hyperparam_mutations` PBT's:
    # each class takes only its own.
    scheduler = tune.create_scheduler(
        name,
        metric="loss",
        mode="min",
        max_t=8,
        perturbation_interval=4,
        hyperparam_mutations={"x": tune.uniform(-2, 2)},
    )
    assert isinstance(scheduler, expected[name.lower()]), (name, scheduler)
    results = tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(scheduler=scheduler, num_samples=4),
        param_space={"x": tune.uniform(-2, 2)},
    ).fit()
    assert len(results) == 4, name
    assert not results.errors, name

try:
    tune.create_scheduler("no-such-scheduler")
except ValueError as error:
    message = str(error)
else:
    raise AssertionError("an unknown scheduler name was accepted")
assert "no-such-scheduler" in message, message
