# mypy: ignore-errors
"""A callback asks for a checkpoint by setting SHOULD_CHECKPOINT.

Follows Ray Tune's python/ray/tune/examples/custom_checkpointing_with_callback.py,
at a smoke-test size.
"""

import json
import os

import tunecore as tune
from tunecore import Callback
from tunecore.result import SHOULD_CHECKPOINT

# Hint: SHOULD_CHECKPOINT is an alias of the string "should_checkpoint"


def evaluation_fn(step, width, height):
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


class MilestoneCheckpointCallback(Callback):
    """Checkpoint every `every` steps, whatever the trainable's own policy."""

    def __init__(self, every):
        self.every = every

    def on_trial_result(self, iteration, trials, trial, result, **info):
        current_step = result.get("iterations", 0)
        if current_step > 0 and current_step % self.every == 0:
            print(f"Callback requesting checkpoint for trial {trial.trial_id} at {current_step}")
            result[SHOULD_CHECKPOINT] = True


class OptimizationTrainable(tune.Trainable):
    def setup(self, config):
        self.current_step = 0
        self.width = config["width"]
        self.height = config["height"]

    def step(self):
        intermediate_score = evaluation_fn(self.current_step, self.width, self.height)
        self.current_step += 1
        return {"iterations": self.current_step, "mean_loss": intermediate_score}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "checkpoint.json"), "w") as f:
            json.dump({"step": self.current_step}, f)

    def load_checkpoint(self, checkpoint):
        with open(os.path.join(checkpoint, "checkpoint.json")) as f:
            self.current_step = json.load(f)["step"]


assert SHOULD_CHECKPOINT == "should_checkpoint"

tuner = tune.Tuner(
    OptimizationTrainable,
    run_config=tune.RunConfig(
        name="smart_checkpoint_test",
        stop={"training_iteration": 7},
        callbacks=[MilestoneCheckpointCallback(every=3)],
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=0, checkpoint_at_end=False),
    ),
    tune_config=tune.TuneConfig(metric="mean_loss", mode="min", num_samples=2),
    param_space={"width": tune.randint(10, 100), "height": tune.loguniform(10, 100)},
)
results = tuner.fit()

assert len(results) == 2
assert not results.errors
for result in results:
    # The callback's requests, and nothing else, made checkpoints.
    steps = [metrics["iterations"] for _, metrics in result.best_checkpoints]
    assert steps == [3, 6], steps
