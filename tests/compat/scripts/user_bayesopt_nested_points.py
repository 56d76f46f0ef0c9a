# mypy: ignore-errors
# requires: bayes_opt
"""BayesOptSearch warm-started with a nested point, on a nested space.

From ray-project/ray issue #28753 ("HyperOptSearch fails with nested config
dicts and points_to_evaluate"), its 2026 comment's reproduction (Ray 2.55):
`BayesOptSearch(points_to_evaluate=[{"a": {"x": 0.5}}])` on the space
`{"a": {"x": tune.uniform(0, 1)}}`; the point is suggested, then its
completion raises `ValueError: keys ['a'] != ['a/x']` on Ray. Here in a
Tuner (what the comment says `Tuner(param_space=...)` does), 3 samples.
"""

import ray

import tunecore as tune
from tunecore.search.bayesopt import BayesOptSearch


def trainable(config):
    return {"loss": (config["a"]["x"] - 0.25) ** 2}


s = BayesOptSearch(
    metric="loss",
    mode="min",
    random_search_steps=1,
    points_to_evaluate=[{"a": {"x": 0.5}}],
    random_state=3,
)
ray.init(num_cpus=2)
tuner = tune.Tuner(
    trainable,
    param_space={"a": {"x": tune.uniform(0.0, 1.0)}},
    tune_config=tune.TuneConfig(search_alg=s, num_samples=3),
)
try:
    results = tuner.fit()
except Exception as e:
    print("fit raised", type(e).__name__, str(e)[:600])
    raise
configs = [r.config for r in results]
for r in results:
    print(r.config, r.metrics.get("loss"), r.error)
assert not results.errors, results.errors
assert {"a": {"x": 0.5}} in configs, configs
assert all(0.0 <= c["a"]["x"] <= 1.0 for c in configs), configs
print("OK")
