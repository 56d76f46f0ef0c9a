# mypy: ignore-errors
# timeout: 180
"""`timesteps_this_iter` and `episodes_this_iter` summed into
`timesteps_total` and `episodes_total`, and a stop on `timesteps_total`.

Follows Ray Tune's "How to work with Callbacks and Metrics in Ray Tune"
guide (tutorials/tune-metrics.md, "Auto-filled Metrics": `timesteps_total`,
`episodes_total`, `timesteps_since_restore`), the `Trainable.train`
docstring ("timesteps_this_iter ... used to compute timesteps_total"), and
the `stop={"timesteps_total": ...}` of python/ray/tune/examples/
pbt_ppo_example.py and pb2_ppo_example.py, without RLlib: a class trainable
and a function trainable reporting their steps.
"""

import json
import os

import tunecore as tune
from tunecore.schedulers import AsyncHyperBandScheduler


class Stepper(tune.Trainable):
    def setup(self, config):
        self.reward = 0.0

    def step(self):
        self.reward += self.config["lr"]
        return {
            "episode_reward_mean": self.reward,
            "timesteps_this_iter": 100,
            "episodes_this_iter": 2,
        }

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "s.json"), "w") as f:
            json.dump({"reward": self.reward}, f)

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "s.json")) as f:
            self.reward = json.load(f)["reward"]


tuner = tune.Tuner(
    Stepper,
    param_space={"lr": tune.grid_search([1.0, 2.0])},
    run_config=tune.RunConfig(stop={"timesteps_total": 500}),
)
results = tuner.fit()
assert not results.errors
for result in results:
    m = result.metrics
    assert m["training_iteration"] == 5, m
    assert m["timesteps_total"] == 500, m
    assert m["episodes_total"] == 10, m
    assert m["timesteps_since_restore"] == 500, m
    df = result.metrics_dataframe
    assert list(df["timesteps_total"]) == [100, 200, 300, 400, 500]


def train_fn(config):
    for i in range(8):
        tune.report({"score": i * config["lr"], "timesteps_this_iter": 50})


# ASHA on timesteps: time_attr="timesteps_total", as the PPO examples do.
tuner = tune.Tuner(
    train_fn,
    param_space={"lr": tune.grid_search([0.1, 0.2, 0.4])},
    tune_config=tune.TuneConfig(
        metric="score",
        mode="max",
        scheduler=AsyncHyperBandScheduler(
            time_attr="timesteps_total", max_t=400, grace_period=100, reduction_factor=2
        ),
    ),
)
results = tuner.fit()
assert not results.errors
totals = sorted(r.metrics["timesteps_total"] for r in results)
assert totals[-1] == 400, totals
assert all(t % 50 == 0 and t >= 100 for t in totals), totals
best = results.get_best_result()
assert best.config["lr"] == 0.4 and best.metrics["timesteps_total"] == 400
