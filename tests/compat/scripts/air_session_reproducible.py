# mypy: ignore-errors
"""`ray.air.session` in a function trainable, with seeded random search.

Follows Ray Tune's FAQ, "How can I reproduce experiments?"
(tune/doc_code/faq.py, `__reproducible_start__`), which reports through
`from ray.air import session`, as Ray 2.x scripts wrote it, and the
session's trial-name calls, asked from inside the trial.
"""

import numpy as np

import tunecore as tune
from tunecore import session


def train(config):
    # Set seed for trainable random result.
    # If you remove this line, you will get different results
    # each time you run the trial, even if the configuration
    # is the same.
    np.random.seed(config["seed"])
    random_result = np.random.uniform(0, 100, size=1).item()
    session.report(
        {
            "result": random_result,
            "name": session.get_trial_name(),
            "id": session.get_trial_id(),
            "resumed": session.get_checkpoint() is not None,
        }
    )


def run():
    # Set seed for Ray Tune's random search.
    # If you remove this line, you will get different configurations
    # each time you run the script.
    np.random.seed(1234)
    tuner = tune.Tuner(
        train,
        tune_config=tune.TuneConfig(
            num_samples=4,
            search_alg=tune.search.BasicVariantGenerator(random_state=1234),
        ),
        param_space={"seed": tune.randint(0, 1000)},
    )
    return tuner.fit()


first, second = run(), run()
assert not first.errors and not second.errors
for results in (first, second):
    for result in results:
        assert result.metrics["id"] == result.metrics["trial_id"]
        assert result.metrics["name"] in str(result.path)
        assert result.metrics["resumed"] is False
        np.random.seed(result.config["seed"])
        assert result.metrics["result"] == np.random.uniform(0, 100, size=1).item()
# The same seed gives the same configs, and each config the same result.
assert [r.config for r in first] == [r.config for r in second]
assert [r.metrics["result"] for r in first] == [r.metrics["result"] for r in second]
