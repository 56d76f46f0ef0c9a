# mypy: ignore-errors
"""Controlling the console output with a CLIReporter.

Follows Ray Tune's "Logging and Outputs in Tune" guide
(tune/tutorials/tune-output.rst, "How to control console output with
Tune?": CLIReporter, add_metric_column, RunConfig(progress_reporter=...)).
"""

import tunecore as tune
from tunecore import CLIReporter


def trainable(config):
    for step in range(3):
        tune.report({"custom_metric": config["x"] * step, "other": 0})


# Limit the number of rows.
reporter = CLIReporter(max_progress_rows=10)
# Add a custom metric column, in addition to the default metrics.
# Note that this must be a metric that is returned in your training results.
reporter.add_metric_column("custom_metric")

tuner = tune.Tuner(
    trainable,
    param_space={"x": tune.grid_search([1, 2])},
    run_config=tune.RunConfig(progress_reporter=reporter),
)
results = tuner.fit()

assert len(results) == 2
assert not results.errors
assert sorted(r.metrics["custom_metric"] for r in results) == [2, 4]
