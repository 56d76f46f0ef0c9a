# mypy: ignore-errors
"""A metric the scheduler needs but no result holds is an error, unless
TUNE_DISABLE_STRICT_METRIC_CHECKING is set.

Follows Ray Tune's environment variables reference (tune/api/env.rst,
TUNE_DISABLE_STRICT_METRIC_CHECKING) and the ASHA usage of
doc/source/tune/doc_code/stopping.py (__early_stopping__).
"""

import os

import tunecore as tune
from tunecore.schedulers import ASHAScheduler


def my_trainable(config):
    for i in range(1, 5):
        tune.report({"loss": 1 / i})


def fit():
    tuner = tune.Tuner(
        my_trainable,
        tune_config=tune.TuneConfig(
            # The scheduler's metric is misspelled: trials report "loss".
            scheduler=ASHAScheduler(metric="acc", mode="max"),
            num_samples=2,
        ),
    )
    return tuner.fit()


try:
    results = fit()
except Exception as error:  # whichever error Tune raises
    message = str(error)
else:
    message = " ".join(str(r.error) for r in results if r.error is not None)
# The run fails, naming the missing metric.
assert "acc" in message, message

os.environ["TUNE_DISABLE_STRICT_METRIC_CHECKING"] = "1"
results = fit()
assert len(results) == 2
assert not results.errors
assert all(r.metrics["training_iteration"] == 4 for r in results)
