# mypy: ignore-errors
# timeout: 300
# requires: fsspec, optuna
"""A module still written against Ray Tune (`from ray import tune`, which no
import rewriting reaches: a library's, or a helper of the user's) hands the
script Ray's own search spaces and configs: a searcher's `space=`, PBT's
`hyperparam_mutations`, a `CheckpointConfig` and `FailureConfig` inside the
script's `RunConfig(...)`, and a whole `RunConfig` and `TuneConfig`.

The script follows Ray's `tune-search-spaces` and `pbt_guide` docs (an
`OptunaSearch(space=...)`, a function trainable that checkpoints each
iteration and resumes from `tune.get_checkpoint()`, PBT perturbing every
iteration); its presets come from the module that imports Ray (the
`preset_*` functions below), one of whose trials fails once and is retried
as the preset `FailureConfig` allows.
"""

import os
import tempfile

from ray import tune as ray_tune  # the library's

import tunecore as tune
from tunecore.schedulers import PopulationBasedTraining
from tunecore.search.optuna import OptunaSearch

# -- the library's presets, built with Ray Tune's own objects -------------------------------------


def preset_space():
    return {
        "lr": ray_tune.loguniform(1e-4, 1e-1),
        "width": ray_tune.randint(4, 17),
        "act": ray_tune.choice(["relu", "tanh"]),
    }


def preset_mutations():
    # Categories as a list: Ray's PBT perturbs any domain by multiplying it.
    return {
        "lr": ray_tune.uniform(1e-4, 1e-1),
        "width": ray_tune.randint(4, 17),
        "act": ["relu", "tanh"],
    }


def preset_checkpointing():
    return ray_tune.CheckpointConfig(
        num_to_keep=2, checkpoint_score_attribute="score", checkpoint_score_order="max"
    )


def preset_failures():
    return ray_tune.FailureConfig(max_failures=1)


def preset_run_config(storage_path):
    return ray_tune.RunConfig(
        name="preset",
        storage_path=storage_path,
        stop={"training_iteration": 3},
        checkpoint_config=ray_tune.CheckpointConfig(num_to_keep=1),
    )


def preset_tune_config():
    return ray_tune.TuneConfig(metric="score", mode="max", num_samples=2)


# -- the script ------------------------------------------------------------------------------------


def train_fn(config):
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as saved:
            with open(os.path.join(saved, "step.txt")) as f:
                start = int(f.read())
    failed_once = os.path.join(tune.get_context().get_trial_dir(), "failed_once")
    for step in range(start, 4):
        if config.get("fail_once") and step == 2 and not os.path.exists(failed_once):
            open(failed_once, "w").close()
            raise RuntimeError("the trial's first run fails at its third step")
        with tempfile.TemporaryDirectory() as saved:
            with open(os.path.join(saved, "step.txt"), "w") as f:
                f.write(str(step + 1))
            tune.report(
                {
                    "score": config["lr"] * (step + 1),
                    "lr": config["lr"],
                    "width": config["width"],
                    "act": config["act"],
                },
                checkpoint=tune.Checkpoint.from_directory(saved),
            )


if __name__ == "__main__":
    storage = tempfile.mkdtemp()

    # A searcher over the library's space; its checkpoint and failure configs.
    results = tune.Tuner(
        train_fn,
        param_space={"fail_once": True},
        tune_config=tune.TuneConfig(
            search_alg=OptunaSearch(space=preset_space(), metric="score", mode="max", seed=7),
            num_samples=3,
        ),
        run_config=tune.RunConfig(
            storage_path=storage,
            checkpoint_config=preset_checkpointing(),
            failure_config=preset_failures(),
        ),
    ).fit()
    assert not results.errors, results.errors  # each trial's one failure was retried
    assert len(results) == 3
    for result in results:
        assert 1e-4 <= result.config["lr"] <= 1e-1, result.config
        assert 4 <= result.config["width"] < 17, result.config
        assert result.config["act"] in ("relu", "tanh"), result.config
        assert result.metrics["training_iteration"] == 4, result.metrics
        kept = [metrics["training_iteration"] for _, metrics in result.best_checkpoints]
        assert sorted(kept) == [3, 4], kept  # num_to_keep=2 of the best scores
    print("searched:", sorted(result.config["width"] for result in results))

    # PBT mutating the library's domains (they also fill the empty space).
    pbt = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=1,
        hyperparam_mutations=preset_mutations(),
    )
    results = tune.Tuner(
        train_fn,
        tune_config=tune.TuneConfig(metric="score", mode="max", scheduler=pbt, num_samples=2),
        run_config=tune.RunConfig(storage_path=storage, name="pbt"),
    ).fit()
    assert not results.errors, results.errors
    for result in results:
        assert 1e-4 <= result.metrics["lr"] <= 1e-1, result.metrics
        assert result.metrics["act"] in ("relu", "tanh"), result.metrics
        assert isinstance(result.metrics["width"], int), result.metrics
        assert result.metrics["training_iteration"] == 4, result.metrics

    # The library's whole RunConfig and TuneConfig.
    results = tune.Tuner(
        train_fn,
        param_space=preset_space(),
        tune_config=preset_tune_config(),
        run_config=preset_run_config(storage),
    ).fit()
    assert not results.errors, results.errors
    assert len(results) == 2
    assert results.experiment_path.endswith(os.path.join(storage, "preset")), (
        results.experiment_path
    )
    for result in results:
        assert result.metrics["training_iteration"] == 3, result.metrics  # the preset's stop
        assert len(result.best_checkpoints) == 1  # its num_to_keep=1
    best = results.get_best_result()  # the preset's metric and mode
    assert best.metrics["score"] == max(result.metrics["score"] for result in results)
    print("best:", best.config)
