# mypy: ignore-errors
"""A function that reports its own `training_iteration`.

Ray Tune's `Trainable.train` fills the field with `result.setdefault`, so
a value the function reports is the one kept: in `Result.metrics`, the
metrics dataframe and result.json, in `stop={"training_iteration": n}`
and in ASHA's milestones (its `time_attr` is `training_iteration`).
`iterations_since_restore` still counts the results. Written the way
Ray Tune's docs write a function trainable and its stopping dict
(doc/source/tune/doc_code/stopping.py), with a counter in tens, as a
function reporting epochs or steps of its own does.
"""

import json
import os

import tunecore as tune
from tunecore.schedulers import ASHAScheduler


def in_tens(config):
    for step in range(1, 9):
        tune.report({"training_iteration": 10 * step, "loss": config["a"] / step})


def back_and_forth(config):
    for value in [3, 1, 4, 1, 5]:
        tune.report({"training_iteration": value, "loss": 1.0})


def iterations(result):
    with open(os.path.join(result.path, "result.json")) as lines:
        return [json.loads(line)["training_iteration"] for line in lines]


# A stopping dict on the function's own counter.
stopped = tune.Tuner(
    in_tens, param_space={"a": 1.0}, run_config=tune.RunConfig(stop={"training_iteration": 30})
).fit()[0]
assert stopped.metrics["training_iteration"] == 30, stopped.metrics
assert stopped.metrics["iterations_since_restore"] == 3, stopped.metrics
assert list(stopped.metrics_dataframe["training_iteration"]) == [10, 20, 30]
assert iterations(stopped) == [10, 20, 30]

# A value that goes back is kept as it is; the stop holds where it first reaches 4.
uneven = tune.Tuner(
    back_and_forth, run_config=tune.RunConfig(stop={"training_iteration": 4})
).fit()[0]
assert iterations(uneven) == [3, 1, 4], iterations(uneven)
assert uneven.metrics["training_iteration"] == 4

# ASHA's milestones are on the function's counter: rungs at 10 and 20, max_t 40.
results = tune.Tuner(
    in_tens,
    param_space={"a": tune.grid_search([1.0, 2.0, 3.0, 4.0])},
    tune_config=tune.TuneConfig(
        metric="loss", mode="min", scheduler=ASHAScheduler(grace_period=10, max_t=40)
    ),
).fit()
assert not results.errors
seen = [iterations(result) for result in results]
assert all(ti == list(range(10, 10 * len(ti) + 1, 10)) for ti in seen), seen
assert max(len(ti) for ti in seen) == 4, seen  # the best stops at max_t, not past it
assert results.get_best_result().metrics["training_iteration"] == 40
