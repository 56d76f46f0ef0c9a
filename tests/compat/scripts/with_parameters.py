# mypy: ignore-errors
"""Large objects passed to every trial with tune.with_parameters.

Follows Ray Tune's FAQ, doc/source/tune/doc_code/faq.py (__huge_data__,
__large_data__), with a small array.
"""

import numpy as np

import tunecore as tune


def train_func(config, num_epochs=5, data=None):
    for i in range(num_epochs):
        total = 0.0
        for sample in data:
            # ... train on sample
            total += sample * config["scale"]
        tune.report({"epoch": i, "total": total, "num_samples_seen": len(data)})


# Some huge dataset
data = np.random.random(size=1000)

tuner = tune.Tuner(
    tune.with_parameters(train_func, num_epochs=3, data=data),
    param_space={"scale": tune.grid_search([1.0, 2.0])},
)
results = tuner.fit()

assert len(results) == 2
assert not results.errors
for result in results:
    # num_epochs=3 came from with_parameters, not the default 5.
    assert result.metrics["training_iteration"] == 3
    assert result.metrics["num_samples_seen"] == 1000
    assert np.isclose(result.metrics["total"], data.sum() * result.config["scale"])
    # The large object is not part of the trial's config.
    assert set(result.config) == {"scale"}


# A trainable may end without reporting anything (__large_data__).
def f(config, data=None):
    pass
    # use data


tuner = tune.Tuner(tune.with_parameters(f, data=data))
results = tuner.fit()

assert len(results) == 1
assert not results.errors
assert "training_iteration" not in results[0].metrics
