# mypy: ignore-errors
"""BOHB: TuneBOHB with HyperBandForBOHB, a class trainable, a concurrency limit.

Follows Ray Tune's python/ray/tune/examples/bohb_example.py (Ray 2.x), with
the imports rewritten. Smaller than Ray's run to stay fast: max_t and the
stop at 16 iterations instead of 100, no 0.1 s sleep per step.
"""

import json
import os

import numpy as np

import tunecore as tune
from tunecore.schedulers import HyperBandForBOHB
from tunecore.search import ConcurrencyLimiter
from tunecore.search.bohb import TuneBOHB

MAX_T = 16


class MyTrainableClass(tune.Trainable):
    """Example agent whose learning curve is a random sigmoid.

    The dummy hyperparameters "width" and "height" determine the slope and
    maximum reward value reached.
    """

    def setup(self, config):
        self.timestep = 0

    def step(self):
        self.timestep += 1
        v = np.tanh(float(self.timestep) / self.config.get("width", 1))
        v *= self.config.get("height", 1)

        # Here we use `episode_reward_mean`, but you can also report other
        # objectives such as loss or accuracy.
        return {"episode_reward_mean": v}

    def save_checkpoint(self, checkpoint_dir):
        path = os.path.join(checkpoint_dir, "checkpoint")
        with open(path, "w") as f:
            f.write(json.dumps({"timestep": self.timestep}))

    def load_checkpoint(self, checkpoint_dir):
        path = os.path.join(checkpoint_dir, "checkpoint")
        with open(path) as f:
            self.timestep = json.loads(f.read())["timestep"]


config = {
    "iterations": 100,
    "width": tune.uniform(0, 20),
    "height": tune.uniform(-100, 100),
    "activation": tune.choice(["relu", "tanh"]),
}

bohb_hyperband = HyperBandForBOHB(
    time_attr="training_iteration",
    max_t=MAX_T,
    reduction_factor=4,
    stop_last_trials=False,
)

bohb_search = TuneBOHB()
bohb_search = ConcurrencyLimiter(bohb_search, max_concurrent=4)

tuner = tune.Tuner(
    MyTrainableClass,
    run_config=tune.RunConfig(name="bohb_test", stop={"training_iteration": MAX_T}),
    tune_config=tune.TuneConfig(
        metric="episode_reward_mean",
        mode="max",
        scheduler=bohb_hyperband,
        search_alg=bohb_search,
        num_samples=10,
    ),
    param_space=config,
)
results = tuner.fit()

print("Best hyperparameters found were: ", results.get_best_result().config)

assert len(results) == 10
assert not results.errors
configs = [r.config for r in results]
# Every config is BOHB's: inside the space, the constant kept.
assert all(0 <= c["width"] <= 20 and -100 <= c["height"] <= 100 for c in configs)
assert all(c["activation"] in ("relu", "tanh") and c["iterations"] == 100 for c in configs)
# HyperBand ends every trial by max_t (the stop criterion ends the last ones),
# and the best trial is one that got there.
iterations = [r.metrics["training_iteration"] for r in results]
assert all(1 <= it <= MAX_T for it in iterations)
best = results.get_best_result()
assert best.metrics["episode_reward_mean"] == max(r.metrics["episode_reward_mean"] for r in results)
