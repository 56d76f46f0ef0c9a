# mypy: ignore-errors
# requires: ConfigSpace, hpbandster
"""TuneBOHB with HyperBandForBOHB over a ConfigSpace, a checkpointing
function trainable.

From ray-project/ray issue #37394 ("Bug in the BOHP", Ray 2.5): the
user's MNIST ConvNet trainable (torch replaced by a numpy stand-in of the
same loop: an lr/momentum-dependent "accuracy" growing per epoch), its
`ConfigSpace.ConfigurationSpace` with `lr` and `momentum`,
`HyperBandForBOHB(time_attr="training_iteration", max_t=)`,
`TuneBOHB(config_space, metric=, mode=)`, a checkpoint each epoch restored
on resume (HyperBand pauses trials), `ray.air.session` -> `tune.report`.
Shrunk: 6 samples, max_t 9.
"""

import os
import pickle
import tempfile

import ConfigSpace as CS
import ray

import tunecore as tune
from tunecore import Checkpoint
from tunecore.schedulers.hb_bohb import HyperBandForBOHB
from tunecore.search.bohb import TuneBOHB


def train_mnist(config):
    start = 0
    acc = 0.0
    ckpt = tune.get_checkpoint()
    if ckpt:
        with ckpt.as_directory() as d:
            with open(os.path.join(d, "state.pkl"), "rb") as f:
                start, acc = pickle.load(f)
    for epoch in range(start, 20):
        acc = acc + (1 - acc) * config["lr"] * 10 * config["momentum"]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "state.pkl"), "wb") as f:
                pickle.dump((epoch + 1, acc), f)
            tune.report({"mean_accuracy": float(acc)}, checkpoint=Checkpoint.from_directory(d))


config_space = CS.ConfigurationSpace(seed=1)
config_space.add(CS.UniformFloatHyperparameter("lr", lower=0.001, upper=0.1))
config_space.add(CS.UniformFloatHyperparameter("momentum", lower=0.1, upper=0.9))

bohb_hyperband = HyperBandForBOHB(time_attr="training_iteration", max_t=9, reduction_factor=3)
bohb_search = TuneBOHB(config_space, metric="mean_accuracy", mode="max", seed=2)

ray.init(num_cpus=2)
tuner = tune.Tuner(
    train_mnist,
    run_config=tune.RunConfig(name="bohb_test", stop={"training_iteration": 9}),
    tune_config=tune.TuneConfig(
        metric="mean_accuracy",
        mode="max",
        scheduler=bohb_hyperband,
        search_alg=bohb_search,
        num_samples=6,
    ),
)
results = tuner.fit()
best = results.get_best_result()
print("best config:", best.config, best.metrics["mean_accuracy"])
its = sorted(r.metrics["training_iteration"] for r in results)
print("iterations:", its)
assert not results.errors, results.errors
assert len(results) == 6 and max(its) == 9
assert all(0.001 <= r.config["lr"] <= 0.1 for r in results)
print("OK")
