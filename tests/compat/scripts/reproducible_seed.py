# mypy: ignore-errors
"""Reproducible search: seeding NumPy fixes the sampled configurations.

Follows Ray Tune's FAQ ("How can I make my Tune experiments
reproducible?"), doc/source/tune/doc_code/faq.py (__reproducible__):
"Set seed for Ray Tune's random search. If you remove this line, you will
get different configurations each time you run the script."
"""

import numpy as np

import tunecore as tune


def train_func(config):
    # Set seed for trainable random result.
    # If you remove this line, you will get different results
    # each time you run the trial, even if the configuration
    # is the same.
    np.random.seed(config["seed"])
    random_result = np.random.uniform(0, 100, size=1).item()
    tune.report({"result": random_result})


def run():
    tuner = tune.Tuner(
        train_func,
        tune_config=tune.TuneConfig(
            num_samples=3,
            search_alg=tune.search.BasicVariantGenerator(),
        ),
        param_space={"seed": tune.randint(0, 1000)},
    )
    results = tuner.fit()
    return sorted((r.config["seed"], r.metrics["result"]) for r in results)


# Set seed for Ray Tune's random search.
np.random.seed(1234)
first = run()
np.random.seed(1234)
second = run()
# Same seed, same configurations, and (seeded trainable) same results.
assert first == second, (first, second)

# Without seeding, another run samples other configurations.
third = run()
assert [seed for seed, _ in third] != [seed for seed, _ in first], third
