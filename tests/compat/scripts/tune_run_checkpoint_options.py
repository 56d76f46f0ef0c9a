# mypy: ignore-errors
"""tune.run's checkpoint options: keep the best two by a "min-" attribute.

Follows Ray Tune's tune.run reference (tune/api/execution.rst:
keep_checkpoints_num, checkpoint_score_attr "If attribute starts with
`min-` it will rank attribute in decreasing order", checkpoint_freq,
checkpoint_at_end) and python/ray/tune/examples/hyperband_example.py.
"""

import json
import os

import tunecore as tune


class MyTrainableClass(tune.Trainable):
    def setup(self, config):
        self.timestep = 0

    def step(self):
        self.timestep += 1
        # The loss is lowest in the middle of training.
        return {"loss": abs(self.timestep - 3)}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "checkpoint.json"), "w") as f:
            json.dump({"timestep": self.timestep}, f)

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "checkpoint.json")) as f:
            self.timestep = json.load(f)["timestep"]


analysis = tune.run(
    MyTrainableClass,
    stop={"training_iteration": 6},
    checkpoint_freq=1,
    keep_checkpoints_num=2,
    checkpoint_score_attr="min-loss",
)

assert len(analysis.trials) == 1
trial = analysis.trials[0]
assert trial.last_result["training_iteration"] == 6
checkpoint = analysis.get_best_checkpoint(trial, metric="loss", mode="min")
with checkpoint.as_directory() as checkpoint_dir:
    with open(os.path.join(checkpoint_dir, "checkpoint.json")) as f:
        # The lowest loss was at timestep 3, and its checkpoint was kept.
        assert json.load(f)["timestep"] == 3
