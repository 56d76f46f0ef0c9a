# mypy: ignore-errors
"""A class Trainable's lifecycle attributes, `done` from `step`, and `cleanup`.

Follows Ray Tune's Trainable API docs (api/trainable.rst, "Trainable
Class API": `setup`, `step` returning `done: True` to end the trial,
`save_checkpoint` / `load_checkpoint`, `cleanup`, `self.iteration`,
`self.training_iteration`, `self.trial_id`, `self.trial_name`, `self.logdir`,
`self.get_config()`) and
doc_code/trainable.py, with `TuneConfig(num_samples=2)`.
"""

import os

import tunecore as tune

MARKERS = os.path.abspath("cleanup_markers")
os.makedirs(MARKERS, exist_ok=True)


class MyTrainable(tune.Trainable):
    def setup(self, config):
        self.x = 0
        self.limit = config["limit"]

    def step(self):
        self.x += 1
        return {
            "score": self.x,
            "it_before": self.iteration,
            "train_it": self.training_iteration,
            "name": self.trial_name,
            "tid": self.trial_id,
            "cfg_limit": self.get_config()["limit"],
            "has_logdir": bool(self.logdir),
            "done": self.x >= self.limit,
        }

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "x.txt"), "w") as f:
            f.write(str(self.x))

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "x.txt")) as f:
            self.x = int(f.read())

    def cleanup(self):
        with open(os.path.join(MARKERS, self.trial_id), "w") as f:
            f.write(str(self.x))


tuner = tune.Tuner(
    MyTrainable,
    param_space={"limit": tune.grid_search([2, 4])},
    tune_config=tune.TuneConfig(num_samples=2),
    run_config=tune.RunConfig(stop={"training_iteration": 10}),
)
results = tuner.fit()
assert len(results) == 4 and not results.errors
for result in results:
    m = result.metrics
    limit = result.config["limit"]
    assert m["training_iteration"] == limit, m
    assert m["score"] == limit
    # self.iteration counts the finished steps: it is limit - 1 during the last
    assert m["it_before"] == limit - 1 and m["train_it"] == limit - 1, m
    assert m["tid"] == m["trial_id"]
    assert m["tid"] in m["name"], m["name"]
    assert m["cfg_limit"] == limit and m["has_logdir"]
    assert m["done"] is True
    with open(os.path.join(MARKERS, m["trial_id"])) as f:
        assert f.read() == str(limit)
