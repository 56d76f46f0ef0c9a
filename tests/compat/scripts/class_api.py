# mypy: ignore-errors
"""Key concepts: the class API (setup / step), stopped by a stop dict.

Follows Ray Tune's doc/source/tune/doc_code/key_concepts.py (__class_api__)
and the Trainable class API guide (tune/api/trainable.rst).
"""

import tunecore as tune


def objective(x, a, b):
    return a * (x**2) + b


class Trainable(tune.Trainable):
    def setup(self, config):
        # config (dict): A dict of hyperparameters
        self.x = 0
        self.a = config["a"]
        self.b = config["b"]

    def step(self):  # This is called iteratively.
        score = objective(self.x, self.a, self.b)
        self.x += 1
        return {"score": score}

    def save_checkpoint(self, checkpoint_dir):
        pass

    def load_checkpoint(self, checkpoint_dir):
        pass


tuner = tune.Tuner(
    Trainable,
    param_space={"a": 2, "b": tune.grid_search([1, 4])},
    run_config=tune.RunConfig(stop={"training_iteration": 5}),
    tune_config=tune.TuneConfig(metric="score", mode="max"),
)
results = tuner.fit()

assert len(results) == 2
assert not results.errors
for result in results:
    # step() ran exactly 5 times: x went 0..4.
    assert result.metrics["training_iteration"] == 5
    assert result.metrics["score"] == objective(4, 2, result.config["b"])
assert results.get_best_result().config == {"a": 2, "b": 4}
