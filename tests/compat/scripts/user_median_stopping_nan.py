# mypy: ignore-errors
"""MedianStoppingRule when one trial reports nan.

From ray-project/ray issue #24809 ("`MedianStoppingRule` mishandles
`nan`s", a Slack user's scheduler: `MedianStoppingRule(time_attr=,
grace_period=, min_samples_required=, mode="min", hard_stop=True)`; "after
the grace period is over, the scheduler seems to stop ALL trials") and
PR #65957's description of it. Shrunk: 4 trials, one reporting nan, the
others 1.0, 2.0 and 3.0 at each of 12 iterations, `grace_period=3`,
`min_samples_required=2`; trials run one at a time in order
(`max_concurrent_trials=1`, a grid). Prints which trials ran to the end.
"""

import math

import ray

import tunecore as tune
from tunecore.schedulers import MedianStoppingRule


def trainable(config):
    for _ in range(12):
        tune.report({"loss": config["loss"]})


scheduler = MedianStoppingRule(
    time_attr="training_iteration",
    grace_period=3,
    min_samples_required=2,
    metric="loss",
    mode="min",
    hard_stop=True,
)
ray.init(num_cpus=2)
tuner = tune.Tuner(
    trainable,
    param_space={"loss": tune.grid_search([float("nan"), 2.0, 1.0, 3.0])},
    tune_config=tune.TuneConfig(scheduler=scheduler, max_concurrent_trials=1),
)
results = tuner.fit()
iters = {}
for r in results:
    key = "nan" if math.isnan(r.config["loss"]) else r.config["loss"]
    iters[key] = r.metrics["training_iteration"]
print("iterations:", iters)
assert not results.errors
# As on Ray 2.60: the nan trial and the first to follow it run on (too few
# finished trials to compare), 1.0 is not stopped, 3.0 is at its grace period.
assert iters == {"nan": 12, 2.0: 12, 1.0: 12, 3.0: 3}, iters
print("OK")
