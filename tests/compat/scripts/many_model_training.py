# mypy: ignore-errors
"""Many-model training: one trial per data partition, a string metric.

Follows Ray's "Scaling Many Model Training with Ray Tune" template
(doc/source/templates/02_many_model_training/many_model_training.ipynb):
`from ray.air import session`, `session.report({"forecast_mse": ...,
"best_model": <str>})`, `tune.with_resources(trainable, resources={"CPU": 2})`,
a grid over partition ids, `result_grid[0].metrics`. statsforecast and the
M5 download are replaced by two numpy models fit on a generated series per
partition.
"""

import numpy as np
import pandas as pd

import tunecore as tune
from tunecore import session

NUM_DATA_PARTITIONS: int = 4


def get_partition(unique_id: str) -> pd.DataFrame:
    rng = np.random.default_rng(int(unique_id.rsplit("_", maxsplit=1)[-1]))
    ds = pd.date_range("2020-01-01", periods=40, freq="D")
    return pd.DataFrame({"unique_id": unique_id, "ds": ds, "y": rng.normal(size=40).cumsum()})


def mean_model(y, h):
    return np.full(h, y.mean())


def naive_model(y, h):
    return np.full(h, y[-1])


model_classes = [mean_model, naive_model]


def train_fn(config: dict):
    data_partition_id = config["data_partition_id"]
    train_df = get_partition(data_partition_id)
    forecast_horizon = 4
    y = train_df["y"].to_numpy()
    train, test = y[:-forecast_horizon], y[-forecast_horizon:]
    errors = {
        model.__name__: float(np.mean((model(train, forecast_horizon) - test) ** 2))
        for model in model_classes
    }
    best_model = min(errors, key=errors.get)
    forecast_mse = errors[best_model]

    # Report the best-performing model and its corresponding eval metric.
    session.report({"forecast_mse": forecast_mse, "best_model": best_model})


trainable = train_fn
trainable = tune.with_resources(trainable, resources={"CPU": len(model_classes) * 1})

data_partitions = [f"FOODS_1_{i:03d}" for i in range(10)]
param_space = {
    "data_partition_id": tune.grid_search(data_partitions[:NUM_DATA_PARTITIONS]),
}

tuner = tune.Tuner(trainable, param_space=param_space)
result_grid = tuner.fit()

sample_result = result_grid[0]
print(sample_result.metrics)

assert len(result_grid) == NUM_DATA_PARTITIONS and not result_grid.errors
for result in result_grid:
    assert result.metrics["best_model"] in ("mean_model", "naive_model")
    assert result.metrics["forecast_mse"] >= 0
    assert result.config["data_partition_id"] in data_partitions
df = result_grid.get_dataframe()
assert sorted(df["config/data_partition_id"]) == data_partitions[:NUM_DATA_PARTITIONS]
assert set(df["best_model"]) <= {"mean_model", "naive_model"}
best = result_grid.get_best_result(metric="forecast_mse", mode="min")
assert best.metrics["forecast_mse"] == df["forecast_mse"].min()
