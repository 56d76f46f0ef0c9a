# mypy: ignore-errors
"""Synchronous Population Based Training (`synch=True`) with Ray's policy
files (`log_config`, on by default).

Follows Ray Tune's python/ray/tune/examples/pbt_example.py
(PBTBenchmarkExample) with `synch=True`, at a smoke-test size: every
trial waits at each perturbation interval until the slowest gets there,
then the lower quantile clones the upper one all at once.

Checked on Ray Tune 2.60 with tests/compat/on_ray_tune.py (ray[tune]
2.60.0, 2026-12-06): passes (85 s).
"""

import json
import os
import random

import numpy as np
import ray

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


ray.init(num_cpus=2)  # fewer CPUs than trials: they take turns to each barrier

perturbation_interval = 4
pbt = PopulationBasedTraining(
    time_attr="training_iteration",
    perturbation_interval=perturbation_interval,
    hyperparam_mutations={
        # distribution for resampling
        "lr": lambda: random.uniform(0.0001, 0.02),
        # allow perturbations within this set of categorical values
        "some_other_factor": [1, 2],
    },
    synch=True,
)

tuner = tune.Tuner(
    PBTBenchmarkExample,
    run_config=tune.RunConfig(
        name="pbt_synch_example",
        stop={"training_iteration": 12},
        verbose=0,
        checkpoint_config=tune.CheckpointConfig(
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
    assert result.metrics["training_iteration"] == 12
    assert result.config["some_other_factor"] in (1, 2)
    assert result.config["lr"] > 0

# Every perturbation happened at a barrier (4 and 8; the run stops at 12,
# where trials pause no more): each policy line names the iterations the
# two trials had last recorded, the barrier's, or the one before it for
# the trial whose result completed the barrier.
global_file = os.path.join(results.experiment_path, "pbt_global.txt")
with open(global_file) as f:
    lines = [json.loads(line) for line in f]
assert lines, "no trial was exploited"
for trial_tag, donor_tag, trial_iteration, donor_iteration, old_config, new_config in lines:
    assert trial_tag != donor_tag
    assert trial_iteration in (3, 4, 7, 8)
    assert donor_iteration in (3, 4, 7, 8)
    assert set(new_config) == set(old_config) == {"lr", "some_other_factor"}
policy_files = [n for n in os.listdir(results.experiment_path) if n.startswith("pbt_policy_")]
assert policy_files
