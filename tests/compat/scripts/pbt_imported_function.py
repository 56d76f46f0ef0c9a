# mypy: ignore-errors
"""PBT over the toy trainable Ray ships in `ray.tune.examples.pbt_function`.

Follows Ray Tune's python/ray/tune/examples/pbt_function.py
(`run_tune_pbt(smoke_test=True)`), with the trainable imported from
`ray.tune.examples.pbt_function` as python/ray/tune/examples/pb2_example.py
imports it, at a smaller population (four trials, ten iterations, two CPUs).
"""

import ray

import tunecore as tune
from tunecore.examples.pbt_function import pbt_function
from tunecore.schedulers import PopulationBasedTraining

ray.init(num_cpus=2)  # force pausing to happen for test

perturbation_interval = 5
pbt = PopulationBasedTraining(
    time_attr="training_iteration",
    perturbation_interval=perturbation_interval,
    hyperparam_mutations={
        # distribution for resampling
        "lr": tune.uniform(0.0001, 0.02),
        # allow perturbations within this set of categorical values
        "some_other_factor": [1, 2],
    },
)

tuner = tune.Tuner(
    pbt_function,
    run_config=tune.RunConfig(
        name="pbt_function_api_example",
        verbose=False,
        stop={
            # Stop when done = True or at some # of train steps
            # (whichever comes first)
            "done": True,
            "training_iteration": 10,
        },
        failure_config=tune.FailureConfig(
            fail_fast=True,
        ),
        checkpoint_config=tune.CheckpointConfig(
            checkpoint_score_attribute="mean_accuracy",
            num_to_keep=2,
        ),
    ),
    tune_config=tune.TuneConfig(
        scheduler=pbt,
        metric="mean_accuracy",
        mode="max",
        num_samples=4,
        reuse_actors=True,
    ),
    param_space={
        "lr": 0.0001,
        "some_other_factor": 1,
        "checkpoint_interval": perturbation_interval,
    },
)
results = tuner.fit()

print("Best hyperparameters found were: ", results.get_best_result().config)
assert not results.errors
assert len(results) == 4
for result in results:
    metrics = result.metrics
    assert metrics["training_iteration"] == 10 or metrics["mean_accuracy"] > 200
    assert set(metrics) >= {"mean_accuracy", "cur_lr", "optimal_lr", "q_err"}
    assert 0.001 <= metrics["optimal_lr"] <= 0.01
    # checkpoint_interval=5: a checkpoint at iterations 5 and 10.
    assert result.checkpoint is not None
    assert len(result.best_checkpoints) <= 2
best = results.get_best_result()
assert best.metrics["mean_accuracy"] == max(r.metrics["mean_accuracy"] for r in results)
