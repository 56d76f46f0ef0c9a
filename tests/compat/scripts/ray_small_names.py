# mypy: ignore-errors
"""Small names of Ray 2.60 that users' scripts, vendored copies of Ray's
code and Ray's own tests reach (a static scan's findings), used as such a
script uses them:

- `from ray.air.constants import TRAINING_ITERATION, EXPR_RESULT_FILE` to
  read a trial's result.json;
- `ray.train.report(..., checkpoint_dir_name=...)` in a Tune trial, with
  Ray Train V2 off as a script that keeps `ray.train.report` in its Tune
  functions must run Ray 2.60 (V2 refuses it there): Ray logs that it
  ignores the name, and reports as `ray.tune.report`;
- a `CallbackList` of two callbacks passed as one, reading Ray 2.60's
  `Trial.local_dir`, `stopping_criterion` and `checkpoint_freq`;
- `Tuner(..., _tuner_kwargs={"checkpoint_freq": 2, "checkpoint_at_end":
  True})` on a class trainable (users' RLlib-era scripts);
- `ExperimentAnalysis(path)` wrapped as `ResultGrid(analysis)` (Ray's
  old test_result_grid.py), `Result(...)` built directly, and
  `unflattened_lookup` on its metrics;
- `Checkpoint.from_dict` and `RunConfig(local_dir=...)`, both refused with
  a message that says what to use;
- `TuneFunctionEncoder` / `TuneFunctionDecoder` on a config holding a
  function (Ray embeds a pickle its decoder refuses by default; tunecore a
  reference it gives back as data: neither gives the function back);
- `RandomState` as the annotation of a helper that samples a domain.
"""

import json
import os
import tempfile

os.environ["RAY_TRAIN_V2_ENABLED"] = "0"  # before Ray is imported

import numpy as np

import tunecore as train
import tunecore as tune
from tunecore import Checkpoint, ExperimentAnalysis, Result, ResultGrid
from tunecore.callback import Callback, CallbackList
from tunecore.constants import EXPR_RESULT_FILE, TRAINING_ITERATION
from tunecore.search.sample import Float, RandomState
from tunecore.utils import unflattened_lookup
from tunecore.utils.serialization import TuneFunctionDecoder, TuneFunctionEncoder

STORAGE = os.path.abspath("results")


def objective(config):
    for step in range(3):
        with tempfile.TemporaryDirectory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "state.json"), "w") as f:
                json.dump({"step": step}, f)
            train.report(
                {"loss": (config["x"] - 2) ** 2 + 1 / (step + 1), "eval": {"acc": step / 3}},
                checkpoint=Checkpoint.from_directory(checkpoint_dir),
                checkpoint_dir_name=f"step_{step}",
            )


class TrialDirs(Callback):
    def __init__(self):
        self.local_dirs = set()

    def on_trial_result(self, iteration, trials, trial, result, **info):
        self.local_dirs.add((trial.local_dir, trial.local_experiment_path))


class Stops(Callback):
    def __init__(self):
        self.seen = []

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.seen.append((trial.stopping_criterion, trial.checkpoint_freq))


dirs, stops = TrialDirs(), Stops()
tuner = tune.Tuner(
    objective,
    param_space={"x": tune.grid_search([1, 2, 4])},
    tune_config=tune.TuneConfig(metric="loss", mode="min"),
    run_config=tune.RunConfig(
        name="small_names",
        storage_path=STORAGE,
        stop={"training_iteration": 3},
        callbacks=[CallbackList([dirs, stops])],
    ),
)
results = tuner.fit()
best = results.get_best_result()
assert best.config == {"x": 2}

# Ray 2.60's trial.local_dir is the experiment's directory on the driver
# (where Ray stages it; tunecore writes a local experiment in place).
[(local_dir, local_experiment_path)] = dirs.local_dirs
assert local_dir == local_experiment_path, dirs.local_dirs
assert stops.seen == [({"training_iteration": 3}, 0)] * 3, stops.seen

# The result keys and file names from ray.air.constants.
with open(os.path.join(best.path, EXPR_RESULT_FILE)) as f:
    rows = [json.loads(line) for line in f if line.strip()]
assert [row[TRAINING_ITERATION] for row in rows] == [1, 2, 3]

# checkpoint_dir_name is ignored in a Tune trial: the usual names.
assert best.checkpoint is not None
assert os.path.basename(best.checkpoint.path).startswith("checkpoint_")
assert not os.path.basename(best.checkpoint.path).startswith("step_")

# ResultGrid(ExperimentAnalysis(path)), as Ray's old tests build it.
analysis = ExperimentAnalysis(
    os.path.join(STORAGE, "small_names"), default_metric="loss", default_mode="max"
)
grid = ResultGrid(analysis)
assert len(grid) == 3
assert grid.get_best_result().config == {"x": 4}  # the analysis's mode: max
assert unflattened_lookup("eval/acc", grid.get_best_result().metrics) == 2 / 3


# _tuner_kwargs, as users' RLlib-era scripts pass them.
class Counter(tune.Trainable):
    def setup(self, config):
        self.count = 0

    def step(self):
        self.count += 1
        return {"count": self.count}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "count.json"), "w") as f:
            json.dump(self.count, f)

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "count.json")) as f:
            self.count = json.load(f)


counted = tune.Tuner(
    Counter,
    run_config=tune.RunConfig(name="counter", storage_path=STORAGE, stop={"training_iteration": 3}),
    _tuner_kwargs={"checkpoint_freq": 2, "checkpoint_at_end": True},
).fit()[0]
kept = []
for checkpoint, metrics in counted.best_checkpoints:
    with checkpoint.as_directory() as checkpoint_dir:
        with open(os.path.join(checkpoint_dir, "count.json")) as f:
            kept.append((json.load(f), metrics["training_iteration"]))
assert kept == [(2, 2), (3, 3)], kept

# A Result built directly, as Ray's dataclass allows.
direct = Result(
    metrics={"loss": 0.5, "config": {"x": 2}}, checkpoint=None, error=None, path=STORAGE
)
assert direct.config == {"x": 2}
assert direct.metrics_dataframe is None and direct.best_checkpoints is None

# What Ray removed says what to use instead.
try:
    Checkpoint.from_dict({"step": 1})
    refused = ""
except AttributeError as error:
    refused = str(error)
assert "Checkpoint.from_directory(checkpoint_dir)" in refused
try:
    tune.RunConfig(local_dir=STORAGE)
    refused = ""
except DeprecationWarning as error:
    refused = str(error)
assert "You should set the `RunConfig(storage_path)` instead." in refused

# A config with a function, written as JSON and read back: data, never the function.
text = json.dumps({"lr": 0.1, "schedule": objective}, cls=TuneFunctionEncoder)
assert json.loads(json.dumps({"lr": 0.1}, cls=TuneFunctionEncoder), cls=TuneFunctionDecoder) == {
    "lr": 0.1
}
try:
    loaded = json.loads(text, cls=TuneFunctionDecoder)
except ValueError:
    loaded = None  # Ray's decoder refuses its embedded pickle
assert loaded is None or not callable(loaded["schedule"])


def draw(domain, random_state: RandomState = None):
    return float(domain.sample(random_state=random_state))


assert draw(Float(0, 1).uniform(), np.random.default_rng(3)) == draw(
    Float(0, 1).uniform(), np.random.default_rng(3)
)
print("small names: ok")
