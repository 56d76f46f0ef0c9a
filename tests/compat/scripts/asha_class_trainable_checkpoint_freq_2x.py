# mypy: ignore-errors
"""A class Trainable under ASHA with `checkpoint_frequency` and
`checkpoint_at_end`, then `ResultGrid` analysis.

Follows python/ray/tune/examples/async_hyperband_example.py and
tutorials/tune-trial-checkpoints.md ("Periodic Checkpointing",
"Checkpointing at Termination"), as Ray 2.x writes them with
`tune.CheckpointConfig(checkpoint_frequency=2, checkpoint_at_end=True)`,
and `Result.best_checkpoints`, `get_best_result(scope="all")`,
`metrics_dataframe`; fewer samples and steps.
"""

import json
import os

import tunecore as tune
from tunecore.schedulers import AsyncHyperBandScheduler


class MyTrainableClass(tune.Trainable):
    def setup(self, config):
        self.timestep = 0

    def step(self):
        self.timestep += 1
        v = self.config["width"] * self.timestep / 10 + self.config["height"] / 100
        return {"episode_reward_mean": v}

    def save_checkpoint(self, checkpoint_dir):
        path = os.path.join(checkpoint_dir, "checkpoint")
        with open(path, "w") as f:
            f.write(json.dumps({"timestep": self.timestep}))

    def load_checkpoint(self, checkpoint_dir):
        path = os.path.join(checkpoint_dir, "checkpoint")
        with open(path) as f:
            self.timestep = json.loads(f.read())["timestep"]


asha = AsyncHyperBandScheduler(grace_period=2, max_t=9, reduction_factor=3)
tuner = tune.Tuner(
    tune.with_resources(MyTrainableClass, {"cpu": 1}),
    run_config=tune.RunConfig(
        name="asha_test",
        stop={"training_iteration": 9},
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=2, checkpoint_at_end=True),
    ),
    tune_config=tune.TuneConfig(
        metric="episode_reward_mean", mode="max", scheduler=asha, num_samples=6
    ),
    param_space={
        "width": tune.sample_from(lambda spec: 10 + int(90 * __import__("random").random())),
        "height": tune.sample_from(lambda spec: int(100 * __import__("random").random())),
    },
)
results = tuner.fit()
assert len(results) == 6 and not results.errors
best = results.get_best_result()
print("Best hyperparameters found were: ", best.config)
for result in results:
    it = result.metrics["training_iteration"]
    assert it in (2, 6, 9), it
    # a checkpoint every 2 iterations, and one at the end
    with result.checkpoint.as_directory() as d:
        assert json.load(open(os.path.join(d, "checkpoint")))["timestep"] == it
    assert len(result.metrics_dataframe) == it
assert (
    results.get_best_result(scope="all").metrics["episode_reward_mean"]
    >= best.metrics["episode_reward_mean"] - 1e-9
)
assert best.metrics["training_iteration"] == 9
