# mypy: ignore-errors
"""A grid of "models", each with its resources, returning its final stats.

Follows Ray Tune's "Running Basic Experiments" / "Tune: Scalable
Hyperparameter Tuning" walkthrough, doc/source/tune/doc_code/tune.py
(train_model returns a dict; tune.with_resources), and the FAQ's
resource examples (__resources__, __resources_pgf__, __resources_lambda__).
"""

import tunecore as tune

NUM_MODELS = 4


def train_model(config):
    score = config["model_id"]

    # Import model libraries, etc...
    # Load data and train model code here...

    # Return final stats. You can also return intermediate progress
    # using tune.report() if needed.
    return {"score": score, "other_data": "done"}


# Define trial parameters as a single grid sweep.
trial_space = {"model_id": tune.grid_search([f"model_{i}" for i in range(NUM_MODELS)])}

# Can customize resources per trial, here we set 1 CPU each.
train_model_1cpu = tune.with_resources(train_model, {"cpu": 1})

# Start a Tune run and print the best result.
tuner = tune.Tuner(train_model_1cpu, param_space=trial_space)
results = tuner.fit()

# Access individual results.
print(results[0])
print(results[1])
print(results[2])

assert len(results) == NUM_MODELS
assert not results.errors
# The returned dict is the trial's one and last result.
assert sorted(r.metrics["score"] for r in results) == [f"model_{i}" for i in range(NUM_MODELS)]
assert all(r.metrics["score"] == r.config["model_id"] for r in results)
assert all(r.metrics["training_iteration"] == 1 for r in results)

# Resources as a placement group: one bundle for the trainable.
tuner = tune.Tuner(
    tune.with_resources(
        train_model, resources=tune.PlacementGroupFactory([{"CPU": 1}], strategy="PACK")
    ),
    param_space={"model_id": "pgf"},
)
results = tuner.fit()
assert not results.errors and results[0].metrics["score"] == "pgf"

# Resources computed from the config.
tuner = tune.Tuner(
    tune.with_resources(
        train_model,
        resources=lambda config: {"CPU": 1, "GPU": 1} if config["use_gpu"] else {"CPU": 1},
    ),
    param_space={"use_gpu": False, "model_id": "lambda"},
)
results = tuner.fit()
assert not results.errors and results[0].metrics["score"] == "lambda"
