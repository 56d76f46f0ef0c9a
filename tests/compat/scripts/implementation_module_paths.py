# mypy: ignore-errors
"""Names imported from the modules Ray Tune defines them in, as users'
Ray 2.x scripts import them (found in public repositories):
`ray.tune.search.optuna.optuna_search.OptunaSearch`,
`ray.tune.search.hyperopt.hyperopt_search.HyperOptSearch`,
`ray.tune.trainable.trainable.Trainable`,
`ray.tune.trainable.util.with_parameters`, `with_resources`,
`ray.tune.analysis.experiment_analysis.ExperimentAnalysis`; with Ray's
keyword names for `register_trainable(name, trainable=...)` and
`Checkpoint.to_directory(path=...)`, and `ray.air.session`'s
`get_trial_resources()`. tunecore had none of these module paths
(`'tunecore.search.optuna' is not a package`), named the arguments
`target` and `dest`, and had no `session.get_trial_resources`.
"""

# requires: optuna, hyperopt

import os

import tunecore as tune
from tunecore import session
from tunecore.analysis.experiment_analysis import ExperimentAnalysis
from tunecore.registry import register_trainable
from tunecore.search.hyperopt.hyperopt_search import HyperOptSearch
from tunecore.search.optuna.optuna_search import OptunaSearch
from tunecore.trainable.trainable import Trainable
from tunecore.trainable.util import with_parameters, with_resources


def objective(config, offset):
    resources = session.get_trial_resources()
    session.report(
        {"loss": (config["x"] - 2) ** 2 + offset, "cpus": resources.required_resources["CPU"]}
    )


trainable = with_resources(with_parameters(objective, offset=1.0), {"cpu": 1})
for searcher in (OptunaSearch(), HyperOptSearch(random_state_seed=1)):
    results = tune.Tuner(
        trainable,
        param_space={"x": tune.uniform(0, 4)},
        tune_config=tune.TuneConfig(search_alg=searcher, metric="loss", mode="min", num_samples=3),
        run_config=tune.RunConfig(
            name=type(searcher).__name__, storage_path=os.path.abspath("results")
        ),
    ).fit()
    assert results.num_errors == 0, results.errors
    assert len(results) == 3
    assert all(result.metrics["cpus"] == 1 for result in results)
    assert results.get_best_result().metrics["loss"] >= 1.0

analysis = ExperimentAnalysis(os.path.abspath("results/OptunaSearch"))
assert len(analysis.trials) == 3
assert (
    analysis.get_best_config(metric="loss", mode="min")["x"]
    == min((t.config for t in analysis.trials), key=lambda c: (c["x"] - 2) ** 2)["x"]
)


class Counter(Trainable):
    def setup(self, config):
        self.count = 0

    def step(self):
        self.count += config_step(self.config)
        return {"count": self.count}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "count.txt"), "w") as f:
            f.write(str(self.count))

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "count.txt")) as f:
            self.count = int(f.read())


def config_step(config):
    return config.get("step", 1)


register_trainable("counter", trainable=Counter, warn=False)
results = tune.Tuner(
    "counter",
    param_space={"step": 2},
    run_config=tune.RunConfig(
        stop={"training_iteration": 3},
        checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=True),
        storage_path=os.path.abspath("results"),
    ),
).fit()
best = results[0]
assert best.metrics["count"] == 6
copy = best.checkpoint.to_directory(path="~/counter_copy")
assert copy == os.path.expanduser("~/counter_copy")
with open(os.path.join(copy, "count.txt")) as f:
    assert f.read() == "6"
assert isinstance(tune.Checkpoint.from_directory(copy), tune.Checkpoint)
