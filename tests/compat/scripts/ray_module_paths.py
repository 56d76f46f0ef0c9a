# mypy: ignore-errors
"""Names imported from Ray Tune's deeper modules, as scripts and Ray's docs
import them: `ray.tune.registry`, `ray.tune.execution.placement_groups`,
`ray.tune.tune_config`, `ray.tune.callback`, `ray.tune.result_grid`,
`ray.tune.trainable`, `ray.tune.analysis`, `ray.tune.logger.pretty_print`
and `ray.tune.utils.validate_save_restore` (which
python/ray/tune/examples/pbt_convnet_example.py runs before tuning).
"""

import json
import os

import ray

import tunecore as tune
from tunecore.analysis import ExperimentAnalysis
from tunecore.callback import Callback
from tunecore.execution.placement_groups import PlacementGroupFactory
from tunecore.logger import pretty_print
from tunecore.registry import get_trainable_cls, register_trainable
from tunecore.result_grid import ResultGrid
from tunecore.search.basic_variant import BasicVariantGenerator
from tunecore.trainable import Trainable
from tunecore.tune_config import TuneConfig
from tunecore.utils import validate_save_restore


class Accumulator(Trainable):
    def setup(self, config):
        self.total = 0.0
        self.lr = config["lr"]

    def step(self):
        self.total += self.lr
        return {"score": self.total}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "state.json"), "w") as f:
            json.dump({"total": self.total}, f)
        return checkpoint_dir

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "state.json")) as f:
            self.total = json.load(f)["total"]


class CountCompleted(Callback):
    def __init__(self):
        self.completed = 0

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.completed += 1


ray.init(num_cpus=2)

# The direct API validate_save_restore drives: train, save, restore.
trainable = Accumulator(config={"lr": 2.0})
trainable.train()
saved = trainable.save()
trainable.train()
assert trainable.train()["score"] == 6.0
restored = Accumulator(config={"lr": 2.0})
restored.restore(saved)
result = restored.train()
assert result["training_iteration"] == 2 and result["score"] == 4.0, result
trainable.stop()
restored.stop()

assert validate_save_restore(Accumulator, config={"lr": 0.5})

register_trainable("accumulator", Accumulator)
assert get_trainable_cls("accumulator") is Accumulator

counter = CountCompleted()
tuner = tune.Tuner(
    tune.with_resources(get_trainable_cls("accumulator"), PlacementGroupFactory([{"CPU": 1}])),
    param_space={"lr": tune.grid_search([0.1, 0.2, 0.3])},
    tune_config=TuneConfig(
        metric="score", mode="max", search_alg=BasicVariantGenerator(max_concurrent=2)
    ),
    run_config=tune.RunConfig(stop={"training_iteration": 3}, callbacks=[counter]),
)
results: ResultGrid = tuner.fit()
assert isinstance(results, ResultGrid)
assert counter.completed == 3
best = results.get_best_result()
assert best.config == {"lr": 0.3}

shown = pretty_print(best.metrics)
print(shown)
lines = shown.splitlines()
assert "training_iteration: 3" in lines, lines
assert any(line.startswith("score: 0.8999") for line in lines), lines
assert not any(line.startswith("config:") for line in lines), lines
assert "done: true" not in pretty_print(best.metrics, exclude={"done"})

analysis = ExperimentAnalysis(results.experiment_path, default_metric="score", default_mode="max")
assert analysis.best_config == {"lr": 0.3}
