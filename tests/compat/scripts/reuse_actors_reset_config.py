# mypy: ignore-errors
"""Reusing actors: a class trainable's reset_config instead of a new setup.

Follows Ray Tune's Trainable class API guide (tune/api/trainable.rst,
"Advanced: Reusing Actors in Tune": implement reset_config and pass
TuneConfig(reuse_actors=True)).
"""

import os

import tunecore as tune


class ReusableTrainable(tune.Trainable):
    def setup(self, config):
        self.pid = os.getpid()
        self.resets = 0
        self.x = config["x"]

    def step(self):
        return {"x": self.x, "pid": self.pid, "resets": self.resets}

    def reset_config(self, new_config):
        # Put the actor back in the state setup() leaves it in, for new_config.
        self.resets += 1
        self.x = new_config["x"]
        return True

    def save_checkpoint(self, checkpoint_dir):
        pass

    def load_checkpoint(self, checkpoint_dir):
        pass


tuner = tune.Tuner(
    ReusableTrainable,
    param_space={"x": tune.grid_search([1, 2, 3, 4, 5, 6])},
    tune_config=tune.TuneConfig(reuse_actors=True, max_concurrent_trials=2),
    run_config=tune.RunConfig(stop={"training_iteration": 2}),
)
results = tuner.fit()

assert len(results) == 6
assert not results.errors
# Each trial saw its own config, whether its actor was new or reused.
assert all(r.metrics["x"] == r.config["x"] for r in results)
# Six trials, at most two at a time: some ran on an actor reset for them.
assert any(r.metrics["resets"] > 0 for r in results)
assert len({r.metrics["pid"] for r in results}) < 6
