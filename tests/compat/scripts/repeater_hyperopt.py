# mypy: ignore-errors
"""Repeated evaluations: Repeater runs each searcher suggestion several
times, and each repeat knows its index (to seed a noisy trainable).

Follows Ray Tune's Repeater reference (tune/api/suggestion.rst "Repeated
Evaluations", the Repeater docstring: `Repeater(BayesOptSearch(...),
repeat=10)` with `tune.run(trainable, num_samples=20,
search_alg=re_search_alg)`, and `set_index`'s
`tune.search.repeater.TRIAL_INDEX` "used for seeds"). HyperOptSearch in
place of the docstring's BayesOptSearch (Ray Tune's BayesOptSearch needs
bayesian-optimization 1.x, this environment has 3.x, so the script could
not be checked on Ray Tune); smaller: 3 repeats of 2 configs (Ray's
example: 10 of 2).
"""

import random

import tunecore as tune
from tunecore.search import Repeater, repeater
from tunecore.search.hyperopt import HyperOptSearch


def trainable(config):
    # A noisy objective, its noise seeded by the repeat's index.
    noise = random.Random(config[repeater.TRIAL_INDEX]).gauss(0, 0.01)
    tune.report({"score": -((config["x"] - 0.3) ** 2) + noise})


search_alg = HyperOptSearch(metric="score", mode="max", random_state_seed=1)
re_search_alg = Repeater(search_alg, repeat=3)

# Repeat 2 samples 3 times each.
analysis = tune.run(
    trainable,
    num_samples=6,
    search_alg=re_search_alg,
    config={"x": tune.uniform(0, 1)},
)

assert len(analysis.trials) == 6
assert all(trial.status == "TERMINATED" for trial in analysis.trials)
groups = {}
for trial in analysis.trials:
    groups.setdefault(trial.config["x"], []).append(trial.config[repeater.TRIAL_INDEX])
# Two configs, each run three times, the repeats numbered 0, 1, 2.
assert len(groups) == 2, groups
assert all(sorted(indices) == [0, 1, 2] for indices in groups.values()), groups
assert all(0 <= x <= 1 for x in groups)
