# mypy: ignore-errors
"""Grid search, constants, sample_from and conditional spaces.

Follows Ray Tune's FAQ, doc/source/tune/doc_code/faq.py
(__grid_search__, __grid_search_2__, __conditional_spaces__).
"""

import numpy as np

import tunecore as tune


def train_fn(config):
    random_result = np.random.uniform(0, 100, size=1).item()
    tune.report({"result": random_result})


parameters = {
    "qux": tune.sample_from(lambda spec: 2 + 2),
    "bar": tune.grid_search([True, False]),
    "foo": tune.grid_search([1, 2, 3]),
    "baz": "asd",  # a constant value
}

tuner = tune.Tuner(train_fn, param_space=parameters)
results = tuner.fit()

# Every combination of the two grids, once.
assert len(results) == 6
assert not results.errors
assert sorted((r.config["bar"], r.config["foo"]) for r in results) == sorted(
    (bar, foo) for bar in [True, False] for foo in [1, 2, 3]
)
assert all(r.config["qux"] == 4 and r.config["baz"] == "asd" for r in results)
assert all(0 <= r.metrics["result"] <= 100 for r in results)

# num_samples=2 repeats the 2x2 grid twice, for a total of 8 trials
tuner = tune.Tuner(
    train_fn,
    run_config=tune.RunConfig(name="my_trainable"),
    param_space={
        "alpha": tune.uniform(100, 200),
        "beta": tune.sample_from(lambda spec: spec.config.alpha * np.random.normal()),
        "nn_layers": [
            tune.grid_search([16, 64]),
            tune.grid_search([16, 64]),
        ],
    },
    tune_config=tune.TuneConfig(num_samples=2),
)
results = tuner.fit()

assert len(results) == 8
assert not results.errors
layers = sorted(tuple(r.config["nn_layers"]) for r in results)
assert layers == sorted([(a, b) for a in [16, 64] for b in [16, 64]] * 2)
for r in results:
    assert 100 <= r.config["alpha"] <= 200
    assert isinstance(r.config["beta"], float)

# Conditional search space: "b" depends on the sampled "a".
config = {
    "a": tune.randint(5, 10),
    "b": tune.sample_from(lambda spec: np.random.randint(0, spec.config.a)),
}
results = tune.Tuner(train_fn, param_space=config, tune_config=tune.TuneConfig(num_samples=4)).fit()
assert len(results) == 4
assert all(0 <= r.config["b"] < r.config["a"] < 10 for r in results)
