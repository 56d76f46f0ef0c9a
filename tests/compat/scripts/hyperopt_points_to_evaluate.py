# mypy: ignore-errors
"""HyperOptSearch seeded with promising configs, on a space of Tune's
domains, through tune.run.

Follows the first part of Ray Tune's "Running Tune experiments with
HyperOpt" notebook (tune/examples/hyperopt_example.ipynb: initial_params as
points_to_evaluate, a ConcurrencyLimiter, AsyncHyperBandScheduler), with
the imports rewritten. Smaller to stay fast: 8 samples (the notebook's
smoke test: 10), 10 steps per trial instead of 100, 0.01 s sleeps.
"""

import time

import tunecore as tune
from tunecore.schedulers import AsyncHyperBandScheduler
from tunecore.search import ConcurrencyLimiter
from tunecore.search.hyperopt import HyperOptSearch


def evaluate(step, width, height):
    time.sleep(0.01)
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


def objective(config):
    for step in range(config["steps"]):
        score = evaluate(step, config["width"], config["height"])
        tune.report({"iterations": step, "mean_loss": score})


initial_params = [
    {"width": 1, "height": 2},
    {"width": 4, "height": 2},
]
algo = HyperOptSearch(points_to_evaluate=initial_params)
algo = ConcurrencyLimiter(algo, max_concurrent=4)

num_samples = 8
scheduler = AsyncHyperBandScheduler()

search_space = {
    "steps": 10,
    "width": tune.uniform(0, 20),
    "height": tune.uniform(-100, 100),
}

analysis = tune.run(
    objective,
    search_alg=algo,
    scheduler=scheduler,
    metric="mean_loss",
    mode="min",
    name="hyperopt_exp",
    num_samples=num_samples,
    config=search_space,
)

print("Best hyperparameters found were: ", analysis.best_config)

assert len(analysis.trials) == num_samples
assert all(trial.status == "TERMINATED" for trial in analysis.trials)
configs = [trial.config for trial in analysis.trials]
# The initial points run as given, with the constant added.
for point in initial_params:
    assert {**point, "steps": 10} in configs, configs
assert all(0 <= c["width"] <= 20 and -100 <= c["height"] <= 100 for c in configs), configs
assert len({(c["width"], c["height"]) for c in configs}) == num_samples, configs
assert analysis.best_result["mean_loss"] == min(
    trial.last_result["mean_loss"] for trial in analysis.trials
)
