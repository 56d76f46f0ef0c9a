# mypy: ignore-errors
"""A PB2 run as a user's reinforcement-learning tuner writes it.

Follows smanolloff/vcmi-gym's raytune driver and trainer (docs/ray-examples.md
row 440): a `Trainable` that declares its resources in a static method
through the dotted `tune.execution.placement_groups` path, takes extra
arguments through `with_parameters` (`setup(self, cfg, initargs)`),
implements `reset_config`, and saves and loads its "model"; PB2 over nested
`hyperparam_bounds` with `synch=True`; trials named by their ids; and a
do-nothing `TBXLoggerCallback` subclass (its `__init__` skips the base's)
passed to turn the default TensorBoard files off.
"""

import copy
import json
import os
from pathlib import Path

import tunecore as tune
from tunecore.logger import TBXLoggerCallback
from tunecore.schedulers.pb2 import PB2


class TBXDummyCallback(TBXLoggerCallback):
    """Makes Tune believe it has a TBX logger already, so it adds none."""

    def __init__(self):
        pass

    def log_trial_start(self, *args, **kwargs):
        pass

    def log_trial_result(self, *args, **kwargs):
        pass

    def log_trial_end(self, *args, **kwargs):
        pass


class PPOTrainer(tune.Trainable):
    @staticmethod
    def default_resource_request(_config):
        return tune.execution.placement_groups.PlacementGroupFactory([{"CPU": 1}])

    def setup(self, cfg, initargs):
        self.bounds = initargs["hyperparam_bounds"]
        self.loads = 0
        self.reset_config(cfg)
        self.model = {"progress": 0.0}

    def reset_config(self, cfg):
        self.cfg = copy.deepcopy(cfg)
        return True

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "model.json"), "w") as out:
            json.dump(self.model, out)
        return checkpoint_dir

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "model.json")) as inp:
            self.model = json.load(inp)
        self.loads += 1

    def step(self):
        learner = self.cfg["learner_kwargs"]
        self.model["progress"] += 100 + 1000 * learner["learning_rate"] * learner["gamma"]
        cpus = self.trial_resources.required_resources["CPU"]
        return {"rew_mean": self.model["progress"], "cpus": cpus}


hyperparam_bounds = {"learner_kwargs": {"learning_rate": [1e-3, 1e-1], "gamma": [0.9, 0.99]}}
param_space = {
    "learner_kwargs": {
        "learning_rate": tune.uniform(1e-3, 1e-1),
        "gamma": tune.uniform(0.9, 0.99),
        "n_steps": 8,
    }
}
pb2 = PB2(
    time_attr="training_iteration",
    metric="rew_mean",
    mode="max",
    perturbation_interval=2,
    hyperparam_bounds=hyperparam_bounds,
    quantile_fraction=0.5,
    log_config=False,
    require_attrs=True,
    synch=True,
)
tuner = tune.Tuner(
    tune.with_parameters(PPOTrainer, initargs={"hyperparam_bounds": hyperparam_bounds}),
    run_config=tune.RunConfig(
        name="pb2_static_resources",
        verbose=False,
        failure_config=tune.FailureConfig(fail_fast=True),
        checkpoint_config=tune.CheckpointConfig(num_to_keep=10),
        stop={"training_iteration": 4},
        callbacks=[TBXDummyCallback()],
    ),
    tune_config=tune.TuneConfig(
        trial_name_creator=lambda t: t.trial_id,
        trial_dirname_creator=lambda t: t.trial_id,
        scheduler=pb2,
        reuse_actors=False,
        num_samples=2,
    ),
    param_space=param_space,
)
results = tuner.fit()

assert len(results) == 2
assert not results.errors
for result in results:
    assert result.metrics["training_iteration"] == 4
    assert result.metrics["cpus"] == 1  # the static method's request
    assert Path(result.path).name == result.metrics["trial_id"]
    learner = result.config["learner_kwargs"]
    assert 1e-3 <= learner["learning_rate"] <= 1e-1 and 0.9 <= learner["gamma"] <= 0.99
    assert learner["n_steps"] == 8
# The do-nothing TBX logger stands for the default one: no event files.
experiment = Path(results[0].path).parent
assert not list(experiment.rglob("events.out.tfevents*"))
assert list(experiment.rglob("result.json"))
