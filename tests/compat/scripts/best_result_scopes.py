# mypy: ignore-errors
"""get_best_result and get_dataframe over scopes other than the last result.

Follows Ray Tune's ResultGrid reference (tune/api/result_grid.rst:
get_best_result(metric, mode, scope="last" | "avg" | "last-5-avg" |
"last-10-avg" | "all"), get_dataframe(filter_metric, filter_mode)).
"""

import tunecore as tune

CURVES = {
    # Best at the end, poor before.
    "late": [0.0] * 8 + [10.0, 10.0],
    # Best on average and over the last five, beaten at the end.
    "steady": [6.0] * 9 + [5.0],
    # The best single result, early.
    "spike": [1.0, 20.0] + [1.0] * 8,
}


def trainable(config):
    for score in CURVES[config["curve"]]:
        tune.report({"score": score})


results = tune.Tuner(
    trainable,
    param_space={"curve": tune.grid_search(list(CURVES))},
    tune_config=tune.TuneConfig(metric="score", mode="max"),
).fit()

assert len(results) == 3
assert not results.errors
assert results.get_best_result().config["curve"] == "late"
assert results.get_best_result(scope="last").config["curve"] == "late"
assert results.get_best_result(scope="avg").config["curve"] == "steady"
assert results.get_best_result(scope="last-5-avg").config["curve"] == "steady"
assert results.get_best_result(scope="last-10-avg").config["curve"] == "steady"
assert results.get_best_result(scope="all").config["curve"] == "spike"
assert results.get_best_result(metric="score", mode="min").config["curve"] == "spike"

# One row per trial: its best result over all its results.
df = results.get_dataframe(filter_metric="score", filter_mode="max")
assert len(df) == 3
assert sorted(df["score"]) == [6.0, 10.0, 20.0]
