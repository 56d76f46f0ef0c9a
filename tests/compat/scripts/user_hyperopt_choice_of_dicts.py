# mypy: ignore-errors
# requires: hyperopt
"""HyperOptSearch over a `tune.choice` of whole dicts beside a new
parameter.

From ray-project/ray issue #49507 ("missing search parameter in
HyperOptSearch", Ray 2.40): a set of pre-tuned hyperparameters is sampled
with `tune.choice(list_of_dicts)` while a new one is tuned; the user reports
the pre-tuned ones are "lost" with HyperOptSearch but not without it. The
issue's script as written (its objective returns a dict, its space and
searcher), 6 samples; the configs each trial saw are checked.
"""

import ray

import tunecore as tune
from tunecore.search.hyperopt import HyperOptSearch

existing_hyperparameters = [
    {"learning_rate": 0.01, "batch_size": 32},
    {"learning_rate": 0.1, "batch_size": 2},
]
new_hyperparameter = {"new_param": tune.uniform(0.1, 10)}
search_space = {
    "existing_hyperparameters": tune.choice(existing_hyperparameters),
    **new_hyperparameter,
}


def objective(config):
    existing = config["existing_hyperparameters"]
    new_param = config["new_param"]
    return {"result": existing["learning_rate"] * new_param + existing["batch_size"]}


search_algo = HyperOptSearch(metric="result", mode="min", random_state_seed=7)

ray.init(num_cpus=2)
tuner = tune.Tuner(
    objective,
    param_space=search_space,
    tune_config=tune.TuneConfig(search_alg=search_algo, num_samples=6),
)
results = tuner.fit()
configs = [r.config for r in results]
for c in configs:
    print(c)
assert not results.errors, results.errors
assert len(configs) == 6
for c in configs:
    assert c["existing_hyperparameters"] in existing_hyperparameters, c
    assert 0.1 <= c["new_param"] <= 10, c
best = results.get_best_result("result", "min")
print("best", best.config, best.metrics["result"])
print("OK")
