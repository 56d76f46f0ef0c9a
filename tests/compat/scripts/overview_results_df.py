# mypy: ignore-errors
"""The Ray overview's Tune quick start: `tune.run` over a grid, the best
config, and `analysis.results_df` for analysis.

Follows Ray 2.60's doc/source/ray-overview/doc_test/ray_tune.py (its stored
`tune.report(mean_loss=...)` written as 2.60's `tune.report({...})`), and
reads the dataframe's `config/` columns: Ray's last results carry the
config, so its `results_df` has them; tunecore's results leave the config
out, and its `results_df` had none until they were added from each trial.
"""

import tunecore as tune


def objective(step, alpha, beta):
    return (0.1 + alpha * step / 100) ** (-1) + beta * 0.1


def training_function(config):
    # Hyperparameters
    alpha, beta = config["alpha"], config["beta"]
    for step in range(10):
        # Iterative training function - can be any arbitrary training procedure.
        intermediate_score = objective(step, alpha, beta)
        # Feed the score back back to Tune.
        tune.report({"mean_loss": intermediate_score})


analysis = tune.run(
    training_function,
    config={
        "alpha": tune.grid_search([0.001, 0.01, 0.1]),
        "beta": tune.choice([1, 2, 3]),
    },
)

best = analysis.get_best_config(metric="mean_loss", mode="min")
print("Best config: ", best)

# Get a dataframe for analyzing trial results.
df = analysis.results_df

assert len(df) == 3
assert sorted(df["config/alpha"]) == [0.001, 0.01, 0.1]
assert set(df["config/beta"]) <= {1, 2, 3}
best_row = df.loc[df["mean_loss"].idxmin()]
assert {"alpha": best_row["config/alpha"], "beta": best_row["config/beta"]} == best
