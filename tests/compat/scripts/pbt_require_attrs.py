# mypy: ignore-errors
# timeout: 300
"""PBT holds every result to its `time_attr` and its metric unless
`require_attrs=False`, whether or not strict metric checking is on.

Follows `PopulationBasedTraining`'s docstring in Ray Tune 2.60
(tune/schedulers/pbt.py: "require_attrs: Whether to require time_attr and
metric to appear in result for every iteration. If True, error will be
raised if these values are not present in trial result.") and the
environment variables reference (tune/api/env.rst,
TUNE_DISABLE_STRICT_METRIC_CHECKING). Ray Tune fails the whole run with
PBT's `RuntimeError`; tunecore fails the trial whose result lacks it, with
the same message (README, differences).
"""

import os

import tunecore as tune
from tunecore.schedulers import PopulationBasedTraining


def train(config):
    for step in range(1, 4):
        result = {"score": config["lr"] * step, "epoch": step}
        result.pop(config["drop"], None)  # the key this trial never reports, if any
        tune.report(result)


def fit(drop, **pbt):
    scheduler = PopulationBasedTraining(
        time_attr="epoch",
        perturbation_interval=100,  # no perturbation: only the check is seen
        hyperparam_mutations={"lr": [0.1, 0.2]},
        **pbt,
    )
    return tune.Tuner(
        train,
        param_space={"lr": tune.grid_search([0.1, 0.2]), "drop": tune.grid_search(["", drop])},
        tune_config=tune.TuneConfig(metric="score", mode="max", scheduler=scheduler),
        run_config=tune.RunConfig(verbose=0),
    ).fit()


def failure(drop, **pbt):
    """The error's text: the run's, or its failed trials'."""
    try:
        results = fit(drop, **pbt)
    except Exception as error:  # whichever error Tune raises
        return str(error)
    return " ".join(str(r.error) for r in results if r.error is not None)


# A result without PBT's time_attr.
message = failure("epoch")
assert "Cannot find time_attr epoch in trial result" in message, message
assert "PBT(require_attrs=False)" in message, message

# Without the metric: strict metric checking names it first...
message = failure("score")
assert "score" in message, message
# ...and with strict metric checking off, PBT still does.
os.environ["TUNE_DISABLE_STRICT_METRIC_CHECKING"] = "1"
message = failure("score")
assert "Cannot find metric score in trial result" in message, message
assert "PBT(require_attrs=False)" in message, message

# require_attrs=False: such results pass (a warning), every trial runs on.
for drop in ("epoch", "score"):
    results = fit(drop, require_attrs=False)
    assert not results.errors, results.errors
    assert sorted(r.metrics["training_iteration"] for r in results) == [3, 3, 3, 3]
print("PBT's require_attrs: time_attr and metric in every result")
