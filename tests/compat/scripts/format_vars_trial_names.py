# mypy: ignore-errors
"""Imports users' scripts take from the modules Ray defines things in,
found by a scan of public repositories' imports (docs/ray-catalogue.md,
round unseen8b): `format_vars` from `ray.tune.search.variant_generator`
(a trial-name creator spelling the trial's parameters as Ray's tag),
`ConcurrencyLimiter` from `ray.tune.search.searcher` and `RunConfig` /
`CheckpointConfig` from `ray.tune.impl.config` (as RLlib's examples write
it). On tunecore each import failed: format_vars was refused as a Ray
internal, the other two were no such name / module.
"""

import tempfile

import tunecore as tune
from tunecore.impl.config import CheckpointConfig, RunConfig
from tunecore.search.searcher import ConcurrencyLimiter, Searcher
from tunecore.search.variant_generator import format_vars


def objective(config):
    for step in range(3):
        tune.report({"score": config["lr"] * (step + 1) + len(config["model"]["name"])})


class NameRecorder(tune.Callback):
    def __init__(self):
        self.names = []

    def on_trial_complete(self, iteration, trials, trial, **info):
        # The name less its trainable's: a function named `objective` that
        # another script in this process registered first is `objective_2`.
        assert str(trial).startswith(f"{trial.trainable_name}_"), str(trial)
        self.names.append(str(trial).removeprefix(f"{trial.trainable_name}_"))


recorder = NameRecorder()


def trial_name(trial):
    params = {tuple(key.split("/")): value for key, value in trial.evaluated_params.items()}
    return f"{trial.trainable_name}_{format_vars(params)}"


tuner = tune.Tuner(
    objective,
    param_space={
        "lr": tune.grid_search([0.001, 0.25]),
        "model": {"name": tune.grid_search(["conv net", "mlp"])},
    },
    tune_config=tune.TuneConfig(
        metric="score",
        mode="max",
        trial_name_creator=trial_name,
    ),
    run_config=RunConfig(
        storage_path=tempfile.mkdtemp(),
        checkpoint_config=CheckpointConfig(num_to_keep=1),
        callbacks=[recorder],
        verbose=0,
    ),
)
results = tuner.fit()


assert not results.errors, results.errors
assert sorted(recorder.names) == [
    "lr=0.0010,name=conv_net",
    "lr=0.0010,name=mlp",
    "lr=0.2500,name=conv_net",
    "lr=0.2500,name=mlp",
], recorder.names
best = results.get_best_result()
assert best.config == {"lr": 0.25, "model": {"name": "conv net"}}, best.config
print("trial names:", sorted(recorder.names))


class ListSearcher(Searcher):
    """Suggests the given configs in turn, recording what it is told."""

    def __init__(self, configs):
        super().__init__(metric="score", mode="max")
        self.configs = list(configs)
        self.running = 0
        self.most_running = 0
        self.completed = []

    def suggest(self, trial_id):
        if not self.configs:
            return Searcher.FINISHED
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        return self.configs.pop(0)

    def on_trial_complete(self, trial_id, result=None, error=False):
        self.running -= 1
        self.completed.append(result["score"])


searcher = ListSearcher([{"lr": lr, "model": {"name": "mlp"}} for lr in (0.5, 1.5, 1.0)])
limited = tune.Tuner(
    objective,
    tune_config=tune.TuneConfig(
        search_alg=ConcurrencyLimiter(searcher, max_concurrent=1), num_samples=3
    ),
    run_config=RunConfig(storage_path=tempfile.mkdtemp(), verbose=0),
).fit()
assert not limited.errors, limited.errors
assert searcher.most_running == 1, searcher.most_running
assert sorted(searcher.completed) == [4.5, 6.0, 7.5], searcher.completed
assert limited.get_best_result(metric="score", mode="max").config["lr"] == 1.5
