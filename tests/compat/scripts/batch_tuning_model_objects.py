# mypy: ignore-errors
# requires: sklearn
"""Batch training over a grid of model objects, each result's config naming
its model object.

Follows Ray Tune's "Batch training & tuning" example
(doc/source/tune/examples/batch_tuning.ipynb): a grid of scikit-learn
estimators times a grid of locations, one model fitted and checkpointed
(pickled) per trial, then a dataframe of `(location, error, algorithm,
checkpoint)` assembled from the results and the best model per location
loaded from its checkpoint. The NYC taxi parquet files it reads from S3 are
replaced by a small synthetic frame per location.
"""

import os
import pickle
from tempfile import TemporaryDirectory

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_absolute_error
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeRegressor

import tunecore as tune
from tunecore import Checkpoint

TARGET = "trip_duration"
sample_locations = [141, 229, 173]


def read_data(sample_id: int) -> pd.DataFrame:
    rng = np.random.default_rng(sample_id)
    distance = rng.uniform(0.5, 10, 200)
    return pd.DataFrame(
        {
            "passenger_count": rng.integers(1, 5, 200),
            "trip_distance": distance,
            TARGET: 120 + 180 * distance + rng.normal(0, 60, 200),
        }
    )


def train_model(config: dict) -> None:
    algorithm = config["algorithm"]
    sample_location_id = config["location"]
    df = read_data(sample_location_id)
    train_df, valid_df = train_test_split(df, test_size=0.2, shuffle=True, random_state=0)
    features = ["passenger_count", "trip_distance"]
    model = algorithm.fit(train_df[features], train_df[TARGET])
    error = mean_absolute_error(valid_df[TARGET], model.predict(valid_df[features]))
    state_dict = {"model": algorithm, "location_id": sample_location_id}
    with TemporaryDirectory() as tmpdir:
        with open(os.path.join(tmpdir, "ckpt.pkl"), "wb") as file:
            pickle.dump(state_dict, file)
        tune.report({"error": error}, checkpoint=Checkpoint.from_directory(tmpdir))


search_space = {
    "algorithm": tune.grid_search(
        [LinearRegression(fit_intercept=True), DecisionTreeRegressor(max_depth=4)]
    ),
    "location": tune.grid_search(sample_locations),
}
tuner = tune.Tuner(
    train_model, param_space=search_space, run_config=tune.RunConfig(name="batch_tuning")
)
results = tuner.fit()
assert len(results) == 6
assert not results.errors

errors = [i.metrics.get("error", 10000.0) for i in results]
checkpoints = [i.checkpoint for i in results]
locations = [i.config["location"] for i in results]
algorithms = [i.config["algorithm"] for i in results]
results_df = pd.DataFrame(
    zip(locations, errors, algorithms, checkpoints, strict=True),
    columns=["location_id", "error", "algorithm", "checkpoint"],
)
final_df = results_df.loc[results_df.groupby("location_id")["error"].idxmin()]
final_df = final_df.sort_values(by=["error"]).set_index("location_id", drop=True)

sample_location_id = final_df.index[0]
sample_algorithm = final_df.loc[[sample_location_id]].algorithm.values[0]
print(f"algorithm type:: {type(sample_algorithm)}")
# The config names the estimator object itself, as the grid gave it.
assert isinstance(sample_algorithm, LinearRegression | DecisionTreeRegressor)
assert {type(a).__name__ for a in algorithms} == {"LinearRegression", "DecisionTreeRegressor"}

checkpoint = final_df.checkpoint[sample_location_id]
with checkpoint.as_directory() as tmpdir:
    with open(os.path.join(tmpdir, "ckpt.pkl"), "rb") as fin:
        state_dict = pickle.load(fin)
sample_model = state_dict["model"]
assert state_dict["location_id"] == sample_location_id
assert type(sample_model) is type(sample_algorithm)
test_df = read_data(sample_location_id)
pred_y = sample_model.predict(test_df[["passenger_count", "trip_distance"]])
assert mean_absolute_error(test_df[TARGET], pred_y) < 200
