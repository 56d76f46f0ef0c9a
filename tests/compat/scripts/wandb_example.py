# mypy: ignore-errors
# requires: wandb
# timeout: 240
"""Weights & Biases through `ray.air.integrations.wandb`: the logger
callback, `setup_wandb` in a training function, and `setup_wandb` in a
class trainable's `setup` with the trial's id and name passed in.

Follows Ray Tune's "Using Weights & Biases with Tune" guide
(doc/source/tune/examples/tune-wandb.ipynb: `tune_with_callback`,
`tune_with_setup`, `tune_trainable`), at a smoke-test size, in W&B's
offline mode (the guide mocks W&B instead where there is no API key:
`WANDB_MODE` for the callback in the driver, `mode="offline"` for
`setup_wandb` in the trials, whose workers Ray started before this script
set the variable), and checks each trial's offline run directory.
"""

import os
from pathlib import Path

import numpy as np

import tunecore as tune
from tunecore.integrations.wandb import WandbLoggerCallback, setup_wandb

os.environ["WANDB_MODE"] = "offline"
os.environ["WANDB_SILENT"] = "true"


def train_function(config):
    for _ in range(30):
        loss = config["mean"] + config["sd"] * np.random.randn()
        tune.report({"loss": loss})


def tune_with_callback():
    """Example for using a WandbLoggerCallback with the function API"""
    tuner = tune.Tuner(
        train_function,
        tune_config=tune.TuneConfig(
            metric="loss",
            mode="min",
        ),
        run_config=tune.RunConfig(
            name="wandb_callback", callbacks=[WandbLoggerCallback(project="Wandb_example")]
        ),
        param_space={
            "mean": tune.grid_search([1, 2, 3, 4, 5]),
            "sd": tune.uniform(0.2, 0.8),
        },
    )
    return tuner.fit()


def train_function_wandb(config):
    wandb = setup_wandb(config, project="Wandb_example", mode="offline")

    for _ in range(30):
        loss = config["mean"] + config["sd"] * np.random.randn()
        tune.report({"loss": loss})
        wandb.log({"loss": loss})


def tune_with_setup():
    """Example for using the setup_wandb utility with the function API"""
    tuner = tune.Tuner(
        train_function_wandb,
        tune_config=tune.TuneConfig(
            metric="loss",
            mode="min",
        ),
        run_config=tune.RunConfig(name="wandb_setup"),
        param_space={
            "mean": tune.grid_search([1, 2, 3, 4, 5]),
            "sd": tune.uniform(0.2, 0.8),
        },
    )
    return tuner.fit()


class WandbTrainable(tune.Trainable):
    def setup(self, config):
        self.wandb = setup_wandb(
            config,
            trial_id=self.trial_id,
            trial_name=self.trial_name,
            group="Example",
            project="Wandb_example",
            mode="offline",
        )

    def step(self):
        for _ in range(30):
            loss = self.config["mean"] + self.config["sd"] * np.random.randn()
            self.wandb.log({"loss": loss})
        return {"loss": loss, "done": True}

    def save_checkpoint(self, checkpoint_dir: str):
        pass

    def load_checkpoint(self, checkpoint_dir: str):
        pass


def tune_trainable():
    """Example for using a WandTrainableMixin with the class API"""
    tuner = tune.Tuner(
        WandbTrainable,
        tune_config=tune.TuneConfig(
            metric="loss",
            mode="min",
        ),
        run_config=tune.RunConfig(name="wandb_trainable"),
        param_space={
            "mean": tune.grid_search([1, 2, 3, 4, 5]),
            "sd": tune.uniform(0.2, 0.8),
        },
    )
    return tuner.fit()


def offline_runs(results):
    """Each trial's offline W&B run directories (under the trial's own
    directory for the callback, the trial's working directory for
    `setup_wandb`)."""
    return {
        result.metrics["trial_id"]: sorted(Path(result.path).rglob("offline-run-*"))
        for result in results
    }


results = tune_with_callback()
assert not results.errors
for trial_id, runs in offline_runs(results).items():
    assert [run.name.rsplit("-", 1)[1] for run in runs] == [trial_id]

results = tune_with_setup()
assert not results.errors
assert len(results) == 5

results = tune_trainable()
assert not results.errors
best = results.get_best_result()  # losses are noisy (sd up to 0.8): the lowest, not mean=1
assert best.metrics["loss"] == min(result.metrics["loss"] for result in results)
