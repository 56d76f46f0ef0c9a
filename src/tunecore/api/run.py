"""`tunecore.run`: Ray Tune's `tune.run`, the one-call form of an experiment.

Every argument maps onto `Tuner`, `TuneConfig` and `RunConfig` (the
deprecated checkpoint arguments onto `CheckpointConfig`, `local_dir` onto
`storage_path`), so both spellings run the same experiment. As in Ray Tune,
it returns an `ExperimentAnalysis`, and raises `TuneError` when a trial
ended in ERROR unless `raise_on_failed_trial=False`.

`resume` (True, "AUTO", either with Ray's suffixes "+ERRORED",
"+RESTART_ERRORED", "+ERRORED_ONLY", "+RESTART_ERRORED_ONLY") or
`resume_config` go on with the experiment of that `name` where it is
stored, if there is one (`Tuner.restore`; the arguments that are code,
callbacks, name creators, a searcher or stopper of your own and the
`sample_from` functions of `config`, are passed on again, the rest is
the log's), else start it, as Ray Tune does. Without a `name` the
experiment's default name is new each time, so nothing is resumed.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from tunecore.api.analysis import ExperimentAnalysis
from tunecore.api.config import (
    CheckpointConfig,
    FailureConfig,
    ResumeConfig,
    ResumeType,
    RunConfig,
    SyncConfig,
    TuneConfig,
    budget_seconds,
)
from tunecore.api.errors import TuneError
from tunecore.api.experiment import Experiment, experiment_list
from tunecore.api.legacy_checkpoints import with_legacy_checkpoints
from tunecore.api.ray_dataclass_configs import from_ray_config
from tunecore.api.reporters import ProgressReporter
from tunecore.api.restored import Trainable
from tunecore.api.tuner import RunParts, Tuner, with_parts
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.shell.stoppers import StopSetting
from tunecore.shell.storage.layout import experiment_dirname
from tunecore.shell.storage.resolve import resolve_storage
from tunecore.shell.trainable.placement_group import PlacementGroupFactory
from tunecore.shell.trial_view import Trial


def run(
    run_or_experiment: Trainable | Experiment,
    *,
    name: str | None = None,
    metric: str | None = None,
    mode: Literal["min", "max"] | None = None,
    stop: StopSetting = None,
    time_budget_s: float | datetime.timedelta | None = None,
    config: Mapping[str, object] | None = None,
    resources_per_trial: dict[str, Any] | PlacementGroupFactory | None = None,
    num_samples: int = 1,
    storage_path: str | None = None,
    storage_filesystem: object = None,
    local_dir: str | None = None,
    sync_config: SyncConfig | None = None,
    search_alg: object | None = None,
    scheduler: TrialScheduler | str | None = None,
    checkpoint_config: CheckpointConfig | None = None,
    checkpoint_freq: int = 0,
    checkpoint_at_end: bool | None = None,
    keep_checkpoints_num: int | None = None,
    checkpoint_score_attr: str | None = None,
    verbose: int = 1,
    progress_reporter: ProgressReporter | None = None,
    log_to_file: bool | str | tuple[str, str] = False,
    trial_name_creator: Callable[[Trial], str] | None = None,
    trial_dirname_creator: Callable[[Trial], str] | None = None,
    chdir_to_trial_dir: bool | None = None,
    export_formats: Sequence[str] | None = None,
    max_failures: int = 0,
    fail_fast: bool | Literal["raise"] = False,
    restore: str | None = None,
    resume: bool | str | None = None,
    resume_config: ResumeConfig | None = None,
    reuse_actors: bool = True,
    raise_on_failed_trial: bool = True,
    callbacks: Sequence[object] | None = None,
    max_concurrent_trials: int | None = None,
    seed: int | None = None,
) -> ExperimentAnalysis:
    """Run an experiment and return its `ExperimentAnalysis` (see the
    module docstring). The deprecated `checkpoint_freq`/`checkpoint_at_end`/
    `keep_checkpoints_num`/`checkpoint_score_attr` (with Ray's `"min-"`
    prefix) override the fields of `checkpoint_config` they set, as in Ray
    Tune (`legacy_checkpoints`). As Ray's `tune.run` (unlike its `Tuner`),
    no `checkpoint_at_end` anywhere means no checkpoint at the end, for a
    `Trainable` class too.

    `run_or_experiment` may be an `Experiment`: its settings are used,
    and this call's arguments of the same names are ignored, as in Ray.
    `restore` is a checkpoint directory every trial starts from (a
    function trainable finds it with `get_checkpoint()`, a `Trainable`
    gets `load_checkpoint`) until it saves one of its own; a resumed
    experiment keeps what its log recorded."""
    if isinstance(run_or_experiment, Experiment):
        given = dict(locals())
        experiment = given.pop("run_or_experiment")
        return run(experiment.run, **{**given, **experiment.arguments})
    checkpoints = with_legacy_checkpoints(
        from_ray_config(checkpoint_config, CheckpointConfig) or CheckpointConfig(),  # type: ignore[arg-type]
        {
            "checkpoint_freq": checkpoint_freq,
            "checkpoint_at_end": checkpoint_at_end,
            "keep_checkpoints_num": keep_checkpoints_num,
            "checkpoint_score_attr": checkpoint_score_attr,
        },
    )
    if checkpoints.checkpoint_at_end is None:
        # Ray's tune.run leaves None as it is, and a trial reads it as no.
        checkpoints = checkpoints.model_copy(update={"checkpoint_at_end": False})
    if local_dir is not None and storage_path is not None:
        raise ValueError(
            f"run() got local_dir={local_dir!r} and storage_path={storage_path!r}: "
            "local_dir is the old name of storage_path, give one"
        )
    how = resume_config if resume_config is not None else resume_setting(resume)
    storage = storage_path if storage_path is not None else local_dir
    if how is not None and name is not None:
        path = experiment_location(storage, name, storage_filesystem)
        if Tuner.can_restore(path, storage_filesystem):
            tuner = Tuner.restore(
                path,
                run_or_experiment,
                param_space=config,
                resume_unfinished=how.unfinished is ResumeType.RESUME,
                resume_errored=how.errored is ResumeType.RESUME,
                restart_errored=how.errored is ResumeType.RESTART,
                callbacks=list(callbacks or []),
                trial_name_creator=trial_name_creator,
                trial_dirname_creator=trial_dirname_creator,
                # Thresholds are the log's; a stopper of your own is code.
                stop=None if stop is None or isinstance(stop, Mapping) else stop,
                storage_filesystem=storage_filesystem,
                # A searcher's name builds one the log's spec rebuilds anyway.
                search_alg=None if isinstance(search_alg, str) else search_alg,
            )
            return _analysed(tuner, raise_on_failed_trial)
    tuner = with_parts(
        RunParts(restore_path=restore_location(restore)),
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
            time_budget_s=budget_seconds(time_budget_s),
            reuse_actors=reuse_actors,
            resources_per_trial=resources_per_trial,
            trial_name_creator=trial_name_creator,
            trial_dirname_creator=trial_dirname_creator,
            chdir_to_trial_dir=chdir_to_trial_dir,
        ),
        run_config=RunConfig(
            name=name,
            storage_path=storage,
            storage_filesystem=storage_filesystem,
            sync_config=sync_config or SyncConfig(),
            stop=stop,
            checkpoint_config=checkpoints,
            failure_config=FailureConfig(max_failures=max_failures, fail_fast=fail_fast),
            callbacks=list(callbacks or []),
            verbose=verbose,
            progress_reporter=progress_reporter,
            log_to_file=log_to_file,
            export_formats=list(export_formats or []),
        ),
    )
    return _analysed(tuner, raise_on_failed_trial)


def run_experiments(  # noqa: PLR0917 - Ray's signature, positional as in Ray
    experiments: Experiment | Sequence[Experiment] | Mapping[str, Mapping[str, Any]],
    scheduler: TrialScheduler | None = None,
    verbose: int = 1,
    progress_reporter: ProgressReporter | None = None,
    resume: bool | str | None = None,
    resume_config: ResumeConfig | None = None,
    reuse_actors: bool = True,
    raise_on_failed_trial: bool = True,
    concurrent: bool = True,  # noqa: ARG001 - Ray's argument; see the docstring
    callbacks: Sequence[object] | None = None,
) -> list[Trial]:
    """Run each experiment with `tunecore.run` and return all their
    trials, as Ray Tune's `run_experiments` does. `experiments` is an
    `Experiment`, a list of them, or a dict of name to a spec dict
    (`{"run": train, "stop": {...}, "config": {...}}`). Experiments run
    one after another (`concurrent` is accepted and makes no difference:
    an experiment has one event log, so two never share a run)."""
    trials: list[Trial] = []
    for experiment in experiment_list(experiments):
        analysis = run(
            experiment,
            scheduler=scheduler,
            verbose=verbose,
            progress_reporter=progress_reporter,
            resume=resume,
            resume_config=resume_config,
            reuse_actors=reuse_actors,
            raise_on_failed_trial=raise_on_failed_trial,
            callbacks=callbacks,
        )
        trials.extend(analysis.trials)
    return trials


def restore_location(restore: str | None) -> str | None:
    """`restore=` as the absolute checkpoint directory every trial starts
    from; one that is not a directory is a `ValueError` naming it."""
    if restore is None:
        return None
    path = Path(restore).expanduser().absolute()
    if not path.is_dir():
        raise ValueError(
            f"restore={restore!r}: {path} is not a directory; give the path of a "
            "checkpoint directory (a trial's checkpoint_NNNNNN, or Checkpoint.path)"
        )
    return path.as_posix()


def _analysed(tuner: Tuner, raise_on_failed_trial: bool) -> ExperimentAnalysis:
    analysis = ExperimentAnalysis(tuner.fit())
    failed = [trial for trial in analysis.trials if trial.status == Trial.ERROR]
    if failed and raise_on_failed_trial:
        raise TuneError(
            f"Trials did not complete: {', '.join(str(t) for t in failed)} (see their "
            "error.txt; run(..., raise_on_failed_trial=False) returns the analysis instead)"
        )
    return analysis


_RESUME_SUFFIXES = {
    "ERRORED": ResumeConfig(errored=ResumeType.RESUME),
    "RESTART_ERRORED": ResumeConfig(errored=ResumeType.RESTART),
    "ERRORED_ONLY": ResumeConfig(unfinished=ResumeType.SKIP, errored=ResumeType.RESUME),
    "RESTART_ERRORED_ONLY": ResumeConfig(unfinished=ResumeType.SKIP, errored=ResumeType.RESTART),
}


_DEPRECATED_RESUME = ("LOCAL", "REMOTE", "PROMPT", "ERRORED_ONLY")
"""The first parts of `resume=` that Ray Tune 2.60 refuses by raising a
`DeprecationWarning` (not a `ValueError`), which scripts may catch."""


def resume_setting(resume: object) -> ResumeConfig | None:
    """Ray's legacy `resume=` as a `ResumeConfig` (None: start anew): True
    or "AUTO", with at most one suffix (the last one given wins, as in
    Ray). A deprecated first part raises `DeprecationWarning` with Ray's
    message, as Ray does; anything else is a `ValueError` naming the value."""
    if resume is None or resume is False:
        return None
    if resume is True:
        return ResumeConfig()
    if not isinstance(resume, str):
        raise ValueError(f"resume={resume!r}: give True, False or 'AUTO' (with '+ERRORED', ...)")
    base, *suffixes = resume.split("+")
    if base in _DEPRECATED_RESUME:
        raise DeprecationWarning(
            f"resume={resume!r}: '{base}' is deprecated. "
            "Please pass in one of (True, False, 'AUTO')."
        )
    if base != "AUTO":
        raise ValueError(f"resume={resume!r}: {base!r} is not one of True, False, 'AUTO'")
    how = ResumeConfig()
    for suffix in suffixes:
        if suffix not in _RESUME_SUFFIXES:
            raise ValueError(
                f"resume={resume!r}: unknown suffix {suffix!r} (one of "
                f"{', '.join(sorted(_RESUME_SUFFIXES))})"
            )
        how = _RESUME_SUFFIXES[suffix]
    return how


def experiment_location(storage_path: str | None, name: str, storage_filesystem: object) -> str:
    """Where the experiment `name` is kept: its directory, its URI, or
    (with a filesystem object) its path inside `storage_filesystem`."""
    spec, _ = resolve_storage(storage_path, storage_filesystem)
    directory = experiment_dirname(name)
    if storage_filesystem is not None:
        return f"{str(storage_path).rstrip('/')}/{directory}"
    return f"{spec.uri.rstrip('/')}/{directory}"
