# mypy: ignore-errors
"""Every search-space primitive of the reference table, in one experiment.

Follows Ray Tune's doc/source/tune/doc_code/key_concepts.py (__config__) and
the Search Space API page (tune/api/search_space.rst).
"""

import math

import tunecore as tune

config = {
    "uniform": tune.uniform(-5, -1),  # Uniform float between -5 and -1
    "quniform": tune.quniform(3.2, 5.4, 0.2),  # Round to multiples of 0.2
    "loguniform": tune.loguniform(1e-4, 1e-1),  # Uniform float in log space
    "qloguniform": tune.qloguniform(1e-4, 1e-1, 5e-5),  # Round to multiples of 0.00005
    "randn": tune.randn(10, 2),  # Normal distribution with mean 10 and sd 2
    "qrandn": tune.qrandn(10, 2, 0.2),  # Round to multiples of 0.2
    "randint": tune.randint(-9, 15),  # Random integer between -9 and 15
    "qrandint": tune.qrandint(-21, 12, 3),  # Round to multiples of 3 (includes 12)
    "lograndint": tune.lograndint(1, 10),  # Random integer in log space
    "qlograndint": tune.qlograndint(1, 10, 2),  # Round to multiples of 2
    "choice": tune.choice(["a", "b", "c"]),  # Choose one of these options uniformly
    "func": tune.sample_from(lambda spec: spec.config.uniform * 0.01),  # Depends on other value
    "grid": tune.grid_search([32, 64, 128]),  # Search over all these values
}


def trainable(config):
    tune.report({"score": config["uniform"] + config["grid"]})


def is_multiple(value, q):
    return math.isclose(round(value / q) * q, value, abs_tol=1e-9)


results = tune.Tuner(
    trainable, param_space=config, tune_config=tune.TuneConfig(num_samples=2)
).fit()

# num_samples repeats the grid: 3 grid values x 2 samples.
assert len(results) == 6
assert not results.errors
assert sorted(result.config["grid"] for result in results) == [32, 32, 64, 64, 128, 128]
for result in results:
    c = result.config
    assert -5 <= c["uniform"] <= -1
    assert 3.2 - 1e-9 <= c["quniform"] <= 5.4 + 1e-9 and is_multiple(c["quniform"], 0.2)
    assert 1e-4 <= c["loguniform"] <= 1e-1
    assert is_multiple(c["qloguniform"], 5e-5)
    assert isinstance(c["randn"], float)
    assert is_multiple(c["qrandn"], 0.2)
    assert isinstance(c["randint"], int) and -9 <= c["randint"] < 15
    assert c["qrandint"] % 3 == 0 and -21 <= c["qrandint"] <= 12
    assert isinstance(c["lograndint"], int) and 1 <= c["lograndint"] < 10
    assert c["qlograndint"] % 2 == 0 and 0 <= c["qlograndint"] <= 10
    assert c["choice"] in ["a", "b", "c"]
    assert math.isclose(c["func"], c["uniform"] * 0.01)
    assert result.metrics["score"] == c["uniform"] + c["grid"]
