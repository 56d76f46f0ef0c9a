# mypy: ignore-errors
"""Class-API checkpointing: periodic, at the end, and on request.

Follows Ray Tune's "How to Save and Load Trial Checkpoints" guide,
doc/source/tune/doc_code/trial_checkpoint.py (__class_api_checkpointing__,
__class_api_periodic_checkpointing__, __class_api_end_checkpointing__,
__class_api_manual_checkpointing__), with json instead of torch.
"""

import json
import os

import tunecore as tune


class MyTrainableClass(tune.Trainable):
    def setup(self, config):
        self.model = {"input_size": config.get("input_size", 32), "steps": 0}

    def step(self):
        self.model["steps"] += 1
        result = {"steps": self.model["steps"]}
        if self.config.get("checkpoint_on_step") == self.model["steps"]:
            # Ask for a checkpoint from the result itself.
            result.update(should_checkpoint=True)
        return result

    def save_checkpoint(self, tmp_checkpoint_dir):
        checkpoint_path = os.path.join(tmp_checkpoint_dir, "model.json")
        with open(checkpoint_path, "w") as f:
            json.dump(self.model, f)
        return tmp_checkpoint_dir

    def load_checkpoint(self, tmp_checkpoint_dir):
        checkpoint_path = os.path.join(tmp_checkpoint_dir, "model.json")
        with open(checkpoint_path) as f:
            self.model = json.load(f)


def saved_steps(result):
    with result.checkpoint.as_directory() as checkpoint_dir:
        with open(os.path.join(checkpoint_dir, "model.json")) as f:
            return json.load(f)["steps"]


tuner = tune.Tuner(
    MyTrainableClass,
    param_space={"input_size": 64},
    run_config=tune.RunConfig(
        stop={"training_iteration": 2},
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=2),
    ),
)
results = tuner.fit()
assert not results.errors
assert results[0].checkpoint is not None
assert saved_steps(results[0]) == 2

tuner = tune.Tuner(
    MyTrainableClass,
    run_config=tune.RunConfig(
        stop={"training_iteration": 5},
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=2),
    ),
)
results = tuner.fit()
# Every 2 iterations, and at the end: checkpoint_at_end defaults to True for
# class trainables (CheckpointConfig's reference).
assert [metrics["training_iteration"] for _, metrics in results[0].best_checkpoints] == [2, 4, 5]

tuner = tune.Tuner(
    MyTrainableClass,
    run_config=tune.RunConfig(
        stop={"training_iteration": 3},
        checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=10, checkpoint_at_end=True),
    ),
)
results = tuner.fit()
assert not results.errors
assert saved_steps(results[0]) == 3

tuner = tune.Tuner(
    MyTrainableClass,
    param_space={"checkpoint_on_step": 2},
    run_config=tune.RunConfig(
        stop={"training_iteration": 4},
        checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=False),
    ),
)
results = tuner.fit()
assert not results.errors
assert [metrics["training_iteration"] for _, metrics in results[0].best_checkpoints] == [2]
