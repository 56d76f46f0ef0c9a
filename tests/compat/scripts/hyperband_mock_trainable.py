# mypy: ignore-errors
"""HyperBand over Ray's stand-in model, `MyTrainableClass`.

Follows Ray Tune's python/ray/tune/examples/hyperband_example.py (which
imports `MyTrainableClass` from `ray.tune.utils.mock_trainable`), at a
smoke-test size with three iterations per trial and a checkpoint at the end.
"""

import math

import ray

import tunecore as tune
from tunecore.schedulers import HyperBandScheduler
from tunecore.utils.mock_trainable import MyTrainableClass

ray.init(num_cpus=2)

hyperband = HyperBandScheduler(time_attr="training_iteration", max_t=200)

tuner = tune.Tuner(
    MyTrainableClass,
    run_config=tune.RunConfig(
        name="hyperband_test",
        stop={"training_iteration": 3},
        verbose=1,
        failure_config=tune.FailureConfig(fail_fast=True),
        checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=True),
    ),
    tune_config=tune.TuneConfig(
        num_samples=8,
        metric="episode_reward_mean",
        mode="max",
        scheduler=hyperband,
    ),
    param_space={"width": tune.randint(10, 90), "height": tune.randint(0, 100)},
)
results = tuner.fit()

best = results.get_best_result()
print("Best hyperparameters found were: ", best.config)

assert len(results) == 8
assert results.num_errors == 0
for result in results:
    width, height = result.config["width"], result.config["height"]
    assert result.metrics["training_iteration"] == 3
    # The stand-in's learning curve: height * tanh(step / width).
    assert math.isclose(result.metrics["episode_reward_mean"], height * math.tanh(3 / width))
    assert result.checkpoint is not None
rewards = [r.metrics["episode_reward_mean"] for r in results]
assert best.metrics["episode_reward_mean"] == max(rewards)
