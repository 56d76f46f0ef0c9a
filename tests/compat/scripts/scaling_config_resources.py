# mypy: ignore-errors
"""A trial asking for its resources with Ray Train's ScalingConfig, and a
callback typed with `ray.tune.experiment.Trial`.

Follows Ray Tune's FAQ ("How do I set resources?": `tune.with_resources`
takes a dict, a PlacementGroupFactory or a ScalingConfig) and the Callback
docs (doc/source/tune/api/callbacks.rst), at a smoke-test size: two CPUs,
each trial reserving Ray's default CPU for its coordinator and half a CPU
for its one worker, so one trial runs at a time. (`trainer_resources` is
left out: Ray 2.60's `ray.train.ScalingConfig` refuses it as deprecated.)
"""

import ray

import tunecore as tune
from tunecore import ScalingConfig
from tunecore.experiment import Trial


class StartRecorder(tune.Callback):
    def __init__(self):
        self.started = []

    def on_trial_start(self, iteration, trials, trial: Trial, **info):
        self.started.append(trial.trial_id)


def train_fn(config):
    tune.report({"score": config["x"] * 2})


ray.init(num_cpus=2)

scaling = ScalingConfig(num_workers=1, resources_per_worker={"CPU": 0.5})
assert scaling.total_resources == {"CPU": 1.5}

recorder = StartRecorder()
tuner = tune.Tuner(
    tune.with_resources(train_fn, resources=scaling),
    param_space={"x": tune.grid_search([1, 2, 3])},
    run_config=tune.RunConfig(callbacks=[recorder], verbose=0),
)
results = tuner.fit()

assert not results.errors
assert sorted(result.metrics["score"] for result in results) == [2, 4, 6]
assert sorted(recorder.started) == sorted(result.metrics["trial_id"] for result in results)
print("ok")
