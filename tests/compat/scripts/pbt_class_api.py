# mypy: ignore-errors
"""Population Based Training over a class trainable with reset_config.

Follows Ray Tune's python/ray/tune/examples/pbt_example.py
(PBTBenchmarkExample), at a smoke-test size.
"""

import json
import os
import random

import numpy as np

import tunecore as tune
from tunecore.schedulers import PopulationBasedTraining


class PBTBenchmarkExample(tune.Trainable):
    """Toy PBT problem for benchmarking adaptive learning rate."""

    def setup(self, config):
        self.lr = config["lr"]
        self.accuracy = 0.0  # end = 1000

    def step(self):
        midpoint = 100  # lr starts decreasing after acc > midpoint
        q_tolerance = 3  # penalize exceeding lr by more than this multiple
        noise_level = 2  # add gaussian noise to the acc increase
        # triangle wave:
        #  - start at 0.001 @ t=0,
        #  - peak at 0.01 @ t=midpoint,
        #  - end at 0.001 @ t=midpoint * 2,
        if self.accuracy < midpoint:
            optimal_lr = 0.01 * self.accuracy / midpoint
        else:
            optimal_lr = 0.01 - 0.01 * (self.accuracy - midpoint) / midpoint
        optimal_lr = min(0.01, max(0.001, optimal_lr))

        # compute accuracy increase
        q_err = max(self.lr, optimal_lr) / min(self.lr, optimal_lr)
        if q_err < q_tolerance:
            self.accuracy += (1.0 / q_err) * random.random()
        elif self.lr > optimal_lr:
            self.accuracy -= (q_err - q_tolerance) * random.random()
        self.accuracy += noise_level * np.random.normal()
        self.accuracy = max(0, self.accuracy)

        return {
            "mean_accuracy": self.accuracy,
            "cur_lr": self.lr,
            "optimal_lr": optimal_lr,  # for debugging
            "q_err": q_err,  # for debugging
            "done": self.accuracy > midpoint * 2,
        }

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "state.json"), "w") as f:
            json.dump({"lr": self.lr, "accuracy": self.accuracy}, f)

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "state.json")) as f:
            state = json.load(f)
        self.accuracy = state["accuracy"]

    def reset_config(self, new_config):
        self.lr = new_config["lr"]
        self.config = new_config
        return True


pbt = PopulationBasedTraining(
    time_attr="training_iteration",
    perturbation_interval=4,
    hyperparam_mutations={
        # distribution for resampling
        "lr": lambda: random.uniform(0.0001, 0.02),
        # allow perturbations within this set of categorical values
        "some_other_factor": [1, 2],
    },
)

tuner = tune.Tuner(
    PBTBenchmarkExample,
    run_config=tune.RunConfig(
        name="pbt_class_api_example",
        stop={"training_iteration": 12},
        verbose=0,
        checkpoint_config=tune.CheckpointConfig(
            checkpoint_frequency=4,
            checkpoint_score_attribute="mean_accuracy",
            num_to_keep=4,
        ),
    ),
    tune_config=tune.TuneConfig(
        scheduler=pbt,
        metric="mean_accuracy",
        mode="max",
        reuse_actors=True,
        num_samples=4,
    ),
    param_space={
        "lr": 0.0001,
        # note: this parameter is perturbed but has no effect on
        # the model training in this example
        "some_other_factor": 1,
    },
)
results = tuner.fit()
best = results.get_best_result()
print("Best hyperparameters found were: ", best.config)

assert len(results) == 4
assert not results.errors
for result in results:
    # Every trial runs to a stop criterion; exploiting a checkpoint does
    # not restart its iteration count.
    assert result.metrics["training_iteration"] == 12
    assert result.config["some_other_factor"] in (1, 2)
    assert result.config["lr"] > 0
assert best.metrics["mean_accuracy"] == max(r.metrics["mean_accuracy"] for r in results)
