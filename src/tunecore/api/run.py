"""`tunecore.run`: Ray Tune's `tune.run`, the one-call form of an experiment.

Every argument maps onto `Tuner`, `TuneConfig` and `RunConfig` (the
deprecated checkpoint arguments onto `CheckpointConfig`, `local_dir` onto
`storage_path`), so both spellings run the same experiment. As in Ray Tune,
it returns an `ExperimentAnalysis`, and raises `TuneError` when a trial
ended in ERROR unless `raise_on_failed_trial=False`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from tunecore.api.analysis import ExperimentAnalysis
from tunecore.api.config import CheckpointConfig, FailureConfig, RunConfig, TuneConfig
from tunecore.api.errors import TuneError
from tunecore.api.reporters import CLIReporter
from tunecore.api.restored import Trainable
from tunecore.api.tuner import Tuner
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.shell.stoppers import StopSetting
from tunecore.shell.trainable.resources import PlacementGroupFactory
from tunecore.shell.trial_view import Trial


def run(
    run_or_experiment: Trainable,
    *,
    name: str | None = None,
    metric: str | None = None,
    mode: Literal["min", "max"] | None = None,
    stop: StopSetting = None,
    time_budget_s: float | None = None,
    config: Mapping[str, object] | None = None,
    resources_per_trial: dict[str, Any] | PlacementGroupFactory | None = None,
    num_samples: int = 1,
    storage_path: str | None = None,
    local_dir: str | None = None,
    search_alg: object | None = None,
    scheduler: TrialScheduler | None = None,
    checkpoint_config: CheckpointConfig | None = None,
    checkpoint_freq: int = 0,
    checkpoint_at_end: bool | None = None,
    keep_checkpoints_num: int | None = None,
    checkpoint_score_attr: str | None = None,
    verbose: int = 1,
    progress_reporter: CLIReporter | None = None,
    log_to_file: bool | str | tuple[str, str] = False,
    trial_name_creator: Callable[[Trial], str] | None = None,
    trial_dirname_creator: Callable[[Trial], str] | None = None,
    chdir_to_trial_dir: bool | None = None,
    export_formats: Sequence[str] | None = None,
    max_failures: int = 0,
    fail_fast: bool | Literal["raise"] = False,
    reuse_actors: bool = True,
    raise_on_failed_trial: bool = True,
    callbacks: Sequence[object] | None = None,
    max_concurrent_trials: int | None = None,
    seed: int | None = None,
) -> ExperimentAnalysis:
    """Run an experiment and return its `ExperimentAnalysis` (see the
    module docstring). `checkpoint_config` and the deprecated
    `checkpoint_freq`/`checkpoint_at_end`/`keep_checkpoints_num`/
    `checkpoint_score_attr` (with Ray's `"min-"` prefix) are one or the
    other, as in Ray Tune."""
    legacy_checkpoints = {
        key: value
        for key, value in {
            "checkpoint_frequency": checkpoint_freq or None,
            "checkpoint_at_end": checkpoint_at_end,
            "num_to_keep": keep_checkpoints_num,
            "checkpoint_score_attribute": checkpoint_score_attr,
        }.items()
        if value is not None
    }
    if checkpoint_config is not None and legacy_checkpoints:
        raise ValueError(
            f"run() got checkpoint_config and {', '.join(sorted(legacy_checkpoints))}: "
            "give the checkpoint settings once, in checkpoint_config"
        )
    if local_dir is not None and storage_path is not None:
        raise ValueError(
            f"run() got local_dir={local_dir!r} and storage_path={storage_path!r}: "
            "local_dir is the old name of storage_path, give one"
        )
    tuner = Tuner(
        run_or_experiment,
        param_space=config,
        tune_config=TuneConfig(
            metric=metric,
            mode=mode,
            num_samples=num_samples,
            scheduler=scheduler,
            search_alg=search_alg,
            max_concurrent_trials=max_concurrent_trials,
            seed=seed,
            time_budget_s=time_budget_s,
            reuse_actors=reuse_actors,
            resources_per_trial=resources_per_trial,
            trial_name_creator=trial_name_creator,
            trial_dirname_creator=trial_dirname_creator,
            chdir_to_trial_dir=chdir_to_trial_dir,
        ),
        run_config=RunConfig(
            name=name,
            storage_path=storage_path if storage_path is not None else local_dir,
            stop=stop,
            checkpoint_config=checkpoint_config
            or CheckpointConfig.model_validate(legacy_checkpoints),
            failure_config=FailureConfig(max_failures=max_failures, fail_fast=fail_fast),
            callbacks=list(callbacks or []),
            verbose=verbose,
            progress_reporter=progress_reporter,
            log_to_file=log_to_file,
            export_formats=list(export_formats or []),
        ),
    )
    analysis = ExperimentAnalysis(tuner.fit())
    failed = [trial for trial in analysis.trials if trial.status == Trial.ERROR]
    if failed and raise_on_failed_trial:
        raise TuneError(
            f"Trials did not complete: {', '.join(str(t) for t in failed)} (see their "
            "error.txt; run(..., raise_on_failed_trial=False) returns the analysis instead)"
        )
    return analysis
