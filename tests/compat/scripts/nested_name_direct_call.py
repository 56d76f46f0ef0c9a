# mypy: ignore-errors
"""A search under a nested experiment name, restored from its path, then
the training function called directly with the best config.

Follows a user's Ray 2.x node2vec search script (an OptunaSearch over a
define-by-run space of constants and suggestions, ASHA, CLIReporter
columns, `RunConfig(storage_path=..., name="node2vec/128/<instance>")`,
`Tuner.restore(path).get_results()`), shrunk: a closed-form loss, 4
samples of 3 epochs. On Ray Tune 2.60 the nested name is nested
directories under `storage_path`, and the function's `tune.report`
outside Tune warns and returns None, so the final direct call runs on;
tunecore refused the name (`name='node2vec/128/...' must be a non-empty
directory name without '/'`) and raised RuntimeError from the report.
"""

import os
import warnings

import optuna

import tunecore as tune
from tunecore.schedulers import ASHAScheduler
from tunecore.search.optuna import OptunaSearch


def define_by_run_func(trial):
    trial.suggest_float("n2v_lr", 1e-4, 1e-1, log=True)
    trial.suggest_categorical("n2v_p", [0.25, 1, 4])
    return {"n2v_dim": 128, "n2v_num_epochs": 3, "n2v_raytune": True}


def node2vec_tune(config):
    loss = 1.0
    for epoch in range(config["n2v_num_epochs"]):
        loss = abs(config["n2v_lr"] - 0.01) + 1.0 / (epoch + 1) + config["n2v_p"] * 0.01
        tune.report({"loss": loss, "epoch": epoch})  # outside Tune too
    return {"loss": loss} if not config["n2v_raytune"] else None


raytune_dir = os.path.abspath("hypersearch")
exp_name = os.path.join("node2vec", "128", "rand_n=0020_i=01")
sampler = optuna.samplers.TPESampler(n_startup_trials=2, multivariate=True, seed=0)
reporter = tune.CLIReporter()
reporter.add_parameter_column("n2v_lr")
reporter.add_metric_column("epoch")
tuner = tune.Tuner(
    tune.with_resources(node2vec_tune, {"cpu": 1, "gpu": 0}),
    tune_config=tune.TuneConfig(
        mode="min",
        metric="loss",
        num_samples=4,
        search_alg=OptunaSearch(
            sampler=sampler, space=define_by_run_func, mode="min", metric="loss"
        ),
        scheduler=ASHAScheduler(grace_period=1, max_t=3),
    ),
    run_config=tune.RunConfig(storage_path=raytune_dir, name=exp_name, progress_reporter=reporter),
)
results = tuner.fit()
assert len(results) == 4 and results.num_errors == 0

exp_path = os.path.join(raytune_dir, exp_name)
assert all(os.path.dirname(r.path) == exp_path for r in results)
results = tune.Tuner.restore(path=exp_path, trainable=node2vec_tune).get_results()
best_config = results.get_best_result(metric="loss", mode="min").config
assert best_config["n2v_dim"] == 128 and "n2v_lr" in best_config

best_config["n2v_raytune"] = False
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    final = node2vec_tune(best_config)
assert final["loss"] > 0
assert caught and all("report" in str(w.message) for w in caught), caught
