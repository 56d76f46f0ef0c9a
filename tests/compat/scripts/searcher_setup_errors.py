# mypy: ignore-errors
"""Mistakes users make setting up a searcher, and the errors that say so.

Follows Ray Tune's OptunaSearch reference (the docstring of
python/ray/tune/search/optuna/optuna_search.py: metric and mode on the
searcher or in TuneConfig, a space given to the searcher or as the Tuner's
param_space, evaluated_rewards "must be the same length as
points_to_evaluate") and the messages Ray Tune raises for them
(python/ray/tune/search/__init__.py: UNDEFINED_METRIC_MODE; the Tuner's
"already instantiated with a search space"). The exception types are
Ray's where a user would catch them (ValueError); for the others the
script only asks for an error naming the culprit.
"""

import optuna

import tunecore as tune
from tunecore.search.optuna import OptunaSearch


def trainable(config):
    tune.report({"loss": config["a"]})


space = {"a": optuna.distributions.FloatDistribution(6, 8)}


def error_of(action):
    try:
        action()
    except Exception as error:
        return error
    raise AssertionError("no error")


# A space on the searcher and values to search in param_space as well.
error = error_of(
    lambda: tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(
            search_alg=OptunaSearch(space, metric="loss", mode="min"), num_samples=2
        ),
        param_space={"a": tune.uniform(6, 8)},
    ).fit()
)
assert isinstance(error, ValueError), repr(error)
assert "search space" in str(error), error

# One reward too many.
error = error_of(
    lambda: OptunaSearch(
        space,
        metric="loss",
        mode="min",
        points_to_evaluate=[{"a": 7}],
        evaluated_rewards=[1, 2],
    )
)
assert isinstance(error, ValueError), repr(error)
assert "evaluated_rewards" in str(error), error

# A mode Optuna would understand, but Tune does not.
error = error_of(lambda: OptunaSearch(space, metric="loss", mode="minimize"))
assert "mode" in str(error), error

# No metric and mode anywhere: fit() fails, it does not run blind.
error = error_of(
    lambda: tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(search_alg=OptunaSearch(), num_samples=2),
        param_space={"a": tune.uniform(6, 8)},
    ).fit()
)
assert "metric" in str(error), error
