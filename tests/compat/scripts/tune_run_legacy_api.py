# mypy: ignore-errors
"""The tune.run API and its ExperimentAnalysis.

Follows Ray Tune's tune.run reference (tune/api/execution.rst) and the
pre-Tuner python/ray/tune/examples/tune_basic_example.py.
"""

import tunecore as tune


def easy_objective(config):
    width, height = config["width"], config["height"]
    for step in range(config["steps"]):
        tune.report(
            {"iterations": step, "mean_loss": (0.1 + width * step / 100) ** (-1) + height * 0.1}
        )


analysis = tune.run(
    easy_objective,
    metric="mean_loss",
    mode="min",
    num_samples=4,
    stop={"training_iteration": 3},
    config={"steps": 10, "width": tune.uniform(0, 20), "height": tune.uniform(-100, 100)},
)
print("Best hyperparameters found were: ", analysis.best_config)

assert len(analysis.trials) == 4
assert all(trial.last_result["training_iteration"] == 3 for trial in analysis.trials)
assert 0 <= analysis.best_config["width"] <= 20
assert analysis.best_result["mean_loss"] == min(
    trial.last_result["mean_loss"] for trial in analysis.trials
)
df = analysis.results_df
assert len(df) == 4
