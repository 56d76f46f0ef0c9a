# mypy: ignore-errors
# timeout: 180
"""Optuna through OptunaSearch: a converted space with a scheduler, initial
points, a define-by-run space and two objectives.

Follows Ray Tune's python/ray/tune/examples/optuna_example.py (OptunaSearch
in a ConcurrencyLimiter with AsyncHyperBandScheduler, through tune.run) and
the "Running Tune experiments with Optuna" notebook
(tune/examples/optuna_example.ipynb: points_to_evaluate, a define-by-run
function, multi-objective), at a smoke-test size.
"""

import time
from typing import Any

import tunecore as tune
from tunecore.schedulers import AsyncHyperBandScheduler
from tunecore.search import ConcurrencyLimiter
from tunecore.search.optuna import OptunaSearch


def evaluation_fn(step, width, height):
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


def easy_objective(config):
    # Hyperparameters
    width, height = config["width"], config["height"]

    for step in range(config["steps"]):
        # Iterative training function - can be any arbitrary training procedure
        intermediate_score = evaluation_fn(step, width, height)
        # Feed the score back back to Tune.
        tune.report({"iterations": step, "mean_loss": intermediate_score})
        time.sleep(0.01)


# python/ray/tune/examples/optuna_example.py
algo = OptunaSearch()
algo = ConcurrencyLimiter(algo, max_concurrent=4)
scheduler = AsyncHyperBandScheduler()
analysis = tune.run(
    easy_objective,
    metric="mean_loss",
    mode="min",
    search_alg=algo,
    scheduler=scheduler,
    num_samples=10,
    config={
        "steps": 10,
        "width": tune.uniform(0, 20),
        "height": tune.uniform(-100, 100),
        # This is an ignored parameter.
        "activation": tune.choice(["relu", "tanh"]),
    },
)

print("Best hyperparameters found were: ", analysis.best_config)

assert len(analysis.trials) == 10
assert all(trial.status == "TERMINATED" for trial in analysis.trials)
assert set(analysis.best_config) == {"steps", "width", "height", "activation"}
assert analysis.best_config["steps"] == 10
assert 0 <= analysis.best_config["width"] <= 20
assert -100 <= analysis.best_config["height"] <= 100
assert analysis.best_result["mean_loss"] == min(
    trial.last_result["mean_loss"] for trial in analysis.trials
)
# Every trial got a config of its own.
assert len({trial.config["width"] for trial in analysis.trials}) == 10


# The notebook.
def evaluate(step, width, height, activation):
    time.sleep(0.01)
    activation_boost = 10 if activation == "relu" else 0
    return (0.1 + width * step / 100) ** (-1) + height * 0.1 + activation_boost


def objective(config):
    for step in range(config["steps"]):
        score = evaluate(step, config["width"], config["height"], config["activation"])
        tune.report({"iterations": step, "mean_loss": score})


search_space = {
    "steps": 5,
    "width": tune.uniform(0, 20),
    "height": tune.uniform(-100, 100),
    "activation": tune.choice(["relu", "tanh"]),
}
num_samples = 4

# Providing an initial set of hyperparameters.
initial_params = [
    {"width": 1, "height": 2, "activation": "relu"},
    {"width": 4, "height": 2, "activation": "relu"},
]
searcher = OptunaSearch(points_to_evaluate=initial_params)
algo = ConcurrencyLimiter(searcher, max_concurrent=4)

tuner = tune.Tuner(
    objective,
    tune_config=tune.TuneConfig(
        metric="mean_loss",
        mode="min",
        search_alg=algo,
        num_samples=num_samples,
    ),
    param_space=search_space,
)
results = tuner.fit()
print("Best hyperparameters found were: ", results.get_best_result().config)

assert len(results) == num_samples
assert not results.errors
configs = [result.config for result in results]
for point in initial_params:
    assert {**point, "steps": 5} in configs, configs
assert results.get_best_result().metrics["mean_loss"] == min(
    result.metrics["mean_loss"] for result in results
)


# Conditional search spaces.
def define_by_run_func(trial) -> dict[str, Any] | None:
    """Define-by-run function to create the search space.

    Ensure no actual computation takes place here. That should go into
    the trainable passed to ``Tuner()`` (in this example, that's
    ``objective``).

    For more information, see https://optuna.readthedocs.io/en/stable\
    /tutorial/10_key_features/002_configurations.html

    This function should either return None or a dict with constant values.
    """

    activation = trial.suggest_categorical("activation", ["relu", "tanh"])

    # Define-by-run allows for conditional search spaces.
    if activation == "relu":
        trial.suggest_float("width", 0, 20)
        trial.suggest_float("height", -100, 100)
    else:
        trial.suggest_float("width", -1, 21)
        trial.suggest_float("height", -101, 101)

    # Return all constants in a dictionary.
    return {"steps": 5}


searcher = OptunaSearch(space=define_by_run_func, metric="mean_loss", mode="min")
algo = ConcurrencyLimiter(searcher, max_concurrent=4)

tuner = tune.Tuner(
    objective,
    tune_config=tune.TuneConfig(
        search_alg=algo,
        num_samples=num_samples,
    ),
)
results = tuner.fit()
print(
    "Best hyperparameters for loss found were: ",
    results.get_best_result("mean_loss", "min").config,
)

assert len(results) == num_samples
assert not results.errors
for result in results:
    config = result.config
    assert set(config) == {"activation", "width", "height", "steps"}
    assert config["steps"] == 5
    if config["activation"] == "relu":
        assert 0 <= config["width"] <= 20 and -100 <= config["height"] <= 100
    else:
        assert -1 <= config["width"] <= 21 and -101 <= config["height"] <= 101


# Multi-objective optimization.
def multi_objective(config):
    # Hyperparameters
    width = config["width"]

    for step in range(config["steps"]):
        # Iterative training function - can be any arbitrary training procedure
        intermediate_score = evaluate(step, config["width"], config["height"], config["activation"])
        # Feed the score back back to Tune.
        tune.report(
            {"iterations": step, "loss": intermediate_score, "gain": intermediate_score * width}
        )


searcher = OptunaSearch(metric=["loss", "gain"], mode=["min", "max"])
algo = ConcurrencyLimiter(searcher, max_concurrent=4)

tuner = tune.Tuner(
    multi_objective,
    tune_config=tune.TuneConfig(
        search_alg=algo,
        num_samples=num_samples,
    ),
    param_space=search_space,
)
results = tuner.fit()

best_loss = results.get_best_result("loss", "min")
best_gain = results.get_best_result("gain", "max")
print("Best hyperparameters for loss found were: ", best_loss.config)
print("Best hyperparameters for gain found were: ", best_gain.config)

assert len(results) == num_samples
assert not results.errors
assert best_loss.metrics["loss"] == min(result.metrics["loss"] for result in results)
assert best_gain.metrics["gain"] == max(result.metrics["gain"] for result in results)
