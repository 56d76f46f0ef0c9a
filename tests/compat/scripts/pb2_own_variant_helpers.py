# mypy: ignore-errors
"""A PB2 run, then PB2's own model refitted on its results with the helpers
of `ray.tune.schedulers.pb2_utils`, as users' PB2 variants in public
repositories do (they import `TV_SquaredExp`, `normalize`, `standardize`,
`UCB`, `optimize_acq` from there to fit scikit-learn's regressor their way).

PB2 with bounds on two hyperparameters (`lr`, `momentum`), four trials of
a closed-form model; then rows (time, reward, lr, momentum) and the reward
change per step, scaled as PB2 scales them, a Gaussian process with the
time-varying kernel, and the next point the upper confidence bound picks.
"""

import numpy as np
import ray
from sklearn.gaussian_process import GaussianProcessRegressor

import tunecore as tune
from tunecore.schedulers.pb2 import PB2
from tunecore.schedulers.pb2_utils import (
    UCB,
    TV_SquaredExp,
    normalize,
    optimize_acq,
    standardize,
)

BOUNDS = {"lr": [1e-4, 0.2], "momentum": [0.0, 0.99]}


class Quadratic(tune.Trainable):
    def setup(self, config):
        self.w = 0.0

    def step(self):
        lr, momentum = self.config["lr"], self.config["momentum"]
        self.w += lr * (1 + momentum) * (1 - self.w)
        return {"reward": self.w, "lr": lr, "momentum": momentum}

    def save_checkpoint(self, checkpoint_dir):
        return {"w": self.w}

    def load_checkpoint(self, checkpoint):
        self.w = checkpoint["w"]


ray.init(num_cpus=2)
pb2 = PB2(
    time_attr="training_iteration",
    perturbation_interval=2,
    hyperparam_bounds=BOUNDS,
)
analysis = tune.run(
    Quadratic,
    scheduler=pb2,
    metric="reward",
    mode="max",
    stop={"training_iteration": 4},
    num_samples=4,
    config={"lr": tune.uniform(1e-4, 0.2), "momentum": tune.uniform(0.0, 0.99)},
    verbose=0,
)

rows, changes = [], []
for history in analysis.trial_dataframes.values():
    rewards = history["reward"].to_numpy()
    for step in range(1, len(rewards)):
        lr, momentum = history["lr"].iloc[step], history["momentum"].iloc[step]
        rows.append([step, rewards[step - 1], lr, momentum])
        changes.append(rewards[step] - rewards[step - 1])
rows, changes = np.array(rows), np.array(changes)
assert len(rows) == 12, rows

limits = np.concatenate(
    (
        np.stack((rows[:, :2].max(axis=0), rows[:, :2].min(axis=0))),
        np.array(list(BOUNDS.values())).T,
    ),
    axis=1,
)
inputs = normalize(rows, limits)
assert (inputs >= 0).all() and (inputs <= 1).all()
targets = standardize(changes)
assert (np.abs(targets) <= 2).all()

model = GaussianProcessRegressor(kernel=TV_SquaredExp(variance=1.0, lengthscale=1.0, epsilon=0.1))
model.fit(inputs, targets)
assert isinstance(model.kernel_, TV_SquaredExp)
assert np.isfinite(model.log_marginal_likelihood_value_)

fixed = inputs[-1, :2]
np.random.seed(0)
chosen = optimize_acq(UCB, model, model, fixed, 2)
assert chosen.shape == (2,) and ((chosen >= 0) & (chosen <= 1)).all()
assert UCB(model, model, chosen, fixed) >= UCB(model, model, [0.5, 0.5], fixed) - 1e-9
low, high = np.array(list(BOUNDS.values())).T
new_lr, new_momentum = low + chosen * (high - low)
assert 1e-4 <= new_lr <= 0.2 and 0.0 <= new_momentum <= 0.99
