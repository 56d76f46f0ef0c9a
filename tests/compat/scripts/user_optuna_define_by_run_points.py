# mypy: ignore-errors
# requires: optuna
"""OptunaSearch with a define-by-run function and points_to_evaluate.

From ray-project/ray issue #35319 ("OptunaSearch ignores
`points_to_evaluate`", Ray 2.4): the first trials should use the given
points, but every trial got the define-by-run function's config. The
issue's script, `ray.air.session` read as `tune.report` (Ray 2.60's name),
then its comment's variant with a Tune space instead (a space holding the
points: Ray also runs points beyond a numeric range, with Optuna's
warning, which tunecore refuses; docs/ray-examples.md row 665).
"""

import optuna

import tunecore as tune
from tunecore import TuneConfig, Tuner
from tunecore.search.optuna import OptunaSearch


def trainable(config: dict):
    tune.report({"score": config["a"]})


def suggest_config(trial: optuna.Trial):
    return {"a": 4}


points_to_evaluate = [{"a": 1}, {"a": 2}]

optuna_search = OptunaSearch(
    suggest_config,
    metric="score",
    mode="max",
    points_to_evaluate=points_to_evaluate,
)
tuner = Tuner(trainable, tune_config=TuneConfig(search_alg=optuna_search, num_samples=5))
result = tuner.fit()
df = result.get_dataframe()
print(df[["config/a", "score"]])
by_run = sorted(df["config/a"].tolist())
print("define-by-run:", by_run)

optuna_search = OptunaSearch(
    metric="score", mode="max", points_to_evaluate=points_to_evaluate, seed=1
)
tuner = Tuner(
    trainable,
    param_space={"a": tune.randint(1, 10)},
    tune_config=TuneConfig(search_alg=optuna_search, num_samples=5),
)
df2 = tuner.fit().get_dataframe()
space = sorted(df2["config/a"].tolist())
print("space:", space)
assert space.count(1) >= 1 and space.count(2) >= 1 and len(space) == 5, space
assert by_run == [4, 4, 4, 4, 4], by_run  # the issue's report, still Ray 2.60's
print("OK")
