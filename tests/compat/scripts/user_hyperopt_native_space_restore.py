# mypy: ignore-errors
# requires: hyperopt
"""HyperOptSearch over HyperOpt's own space, run once, then "resumed".

From ray-project/ray issue #30223 ("Scope of `Tuner.restore()`
functionality is unclear", Ray 2.1): the script runs the experiment if its
directory does not exist, else `Tuner.restore`s it and fits again,
expecting better results; the maintainers answered that restore only
finishes an interrupted experiment. Its space is `hp.uniform`s given to
`HyperOptSearch`, its storage `RunConfig(storage_path=, name=)`. In Ray
2.60's names (`tune.report`, `trainable=` required by `Tuner.restore`,
`ray.air` -> `tune`), 4 samples, the script's two runs in one process.
"""

import os

from hyperopt import hp

import tunecore as tune
from tunecore.search.hyperopt import HyperOptSearch


def objective(config):
    score = config["a"] ** 2 + config["b"]
    tune.report({"SCORE": score})


search_space = {"a": hp.uniform("a", 0, 1), "b": hp.uniform("b", 0, 1)}

raw_log_dir = "ray_log"
raw_log_name = "example"
log_dir = os.path.join(os.getcwd(), raw_log_dir, raw_log_name)


def run():
    if not os.path.exists(log_dir):
        print("--- this is the 1st run ----")
        algorithm = HyperOptSearch(search_space, metric="SCORE", mode="max", random_state_seed=5)
        tuner = tune.Tuner(
            objective,
            tune_config=tune.TuneConfig(num_samples=4, search_alg=algorithm),
            run_config=tune.RunConfig(
                storage_path=os.path.join(os.getcwd(), raw_log_dir), name=raw_log_name
            ),
        )
    else:
        print("--- this is a resumed run ----")
        tuner = tune.Tuner.restore(log_dir, trainable=objective)
    results = tuner.fit()
    best = results.get_best_result(metric="SCORE", mode="max")
    print(len(results), best.config, best.metrics["SCORE"])
    return results, best


first, best1 = run()
assert len(first) == 4 and not first.errors
assert all(set(r.config) == {"a", "b"} for r in first)
second, best2 = run()
assert len(second) == 4 and not second.errors
assert best2.config == best1.config, (best1.config, best2.config)
assert best2.metrics["SCORE"] == best1.metrics["SCORE"]
print("OK")
