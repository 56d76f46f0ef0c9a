"""`Tuner(...).fit()` and `run(...)`: an experiment from the user's settings.

This module only assembles: it turns the validated configs into the core's
`ExperimentConfig`, a searcher and a scheduler, picks the executor, the
storage, the callbacks and the progress output, and hands them to the
shell's loop. Every decision during the run is the core's.
"""

from __future__ import annotations

import datetime
import functools
import os
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

from tunecore.api.config import CheckpointConfig, FailureConfig, RunConfig, TuneConfig
from tunecore.api.results import ResultGrid
from tunecore.core.experiment import ExperimentConfig, new_experiment
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.search import BasicVariantGenerator, ConcurrencyLimiter, Searcher
from tunecore.core.search.generator import UNBOUNDED
from tunecore.model import CheckpointPolicy, ExportFormat, Mode, Resources
from tunecore.shell.callbacks import CallbackList, CSVLoggerCallback, JsonLoggerCallback
from tunecore.shell.executors.base import Executor
from tunecore.shell.executors.host import TrainableFactory
from tunecore.shell.executors.inprocess import InProcessExecutor
from tunecore.shell.loop import ExperimentLoop
from tunecore.shell.progress import ProgressReporter, final_summary, spec_name
from tunecore.shell.storage import ExperimentStorage
from tunecore.shell.trainable import make_worker_trainable, resolve_trainable, trainable_name

DEFAULT_STORAGE = "~/tunecore_results"

Trainable = Callable[..., object] | type | str


class Tuner:
    """Tune `trainable` (a function, a `tunecore.Trainable` subclass, a
    registered name or an import path `"module:function"`) over
    `param_space`."""

    def __init__(
        self,
        trainable: Trainable,
        *,
        param_space: Mapping[str, object] | None = None,
        tune_config: TuneConfig | None = None,
        run_config: RunConfig | None = None,
    ) -> None:
        self._target = resolve_trainable(trainable) if isinstance(trainable, str) else trainable
        self._name = trainable if isinstance(trainable, str) else trainable_name(trainable)
        self._space = dict(param_space or {})
        self._tune = tune_config or TuneConfig()
        self._run = run_config or RunConfig()

    def fit(self) -> ResultGrid:
        """Run the experiment to its end (or Ctrl-C) and return its results."""
        tune, run = self._tune, self._run
        name = run.name or f"{_short(self._name)}_{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}"
        storage = ExperimentStorage(os.path.expanduser(run.storage_path or DEFAULT_STORAGE), name)
        state = new_experiment(self._experiment_config(), self._scheduler(), self._searcher())
        executor = self._executor()
        callbacks = CallbackList(
            [JsonLoggerCallback(storage), CSVLoggerCallback(storage), *run.callbacks]
        )
        name_of = tune.trial_name_creator or spec_name
        reporter = ProgressReporter(
            metric=tune.metric,
            mode=_mode(tune.mode),
            verbose=run.verbose,
            experiment_dir=str(storage.experiment_dir),
            name_of=name_of,
        )
        loop = ExperimentLoop(
            state,
            executor,
            storage,
            callbacks,
            on_state=reporter.update,
            trial_dirname=tune.trial_dirname_creator,
            trial_name_of=tune.trial_name_creator,
            output_files=_output_files(run.log_to_file),
            chdir=tune.chdir_to_trial_dir,
        )
        final = loop.run()
        reporter.close(final)
        if run.verbose:
            print(final_summary(final, metric=tune.metric, mode=_mode(tune.mode), name_of=name_of))
        ordered = sorted(final.trials.values(), key=lambda t: final.index[t.trial_id])
        return ResultGrid(
            ordered,
            {t.trial_id: loop.trial_dir(t.trial_id) for t in ordered},
            metric=tune.metric,
            mode=tune.mode,
            experiment_path=storage.experiment_dir,
            error=final.error,
        )

    # -- assembling ---------------------------------------------------------

    def _experiment_config(self) -> ExperimentConfig:
        tune, run = self._tune, self._run
        checkpoints: CheckpointConfig = run.checkpoint_config
        failures: FailureConfig = run.failure_config
        resources = dict(tune.resources_per_trial)
        return ExperimentConfig(
            trainable_name=self._name,
            metric=tune.metric,
            mode=_mode(tune.mode),
            stopping_criterion=dict(run.stop or {}),
            checkpoint_policy=CheckpointPolicy(
                frequency=checkpoints.checkpoint_frequency,
                at_end=checkpoints.checkpoint_at_end,
                num_to_keep=checkpoints.num_to_keep,
                score_attribute=checkpoints.checkpoint_score_attribute,
                score_order=Mode(checkpoints.checkpoint_score_order),
            ),
            resources_per_trial=Resources(
                cpu=resources.pop("cpu", 1.0), gpu=resources.pop("gpu", 0.0), custom=resources
            ),
            max_failures=failures.max_failures,
            fail_fast=failures.fail_fast,
            max_pending_trials=tune.max_pending_trials or 16,
            time_budget_s=tune.time_budget_s,
            trial_id_prefix=secrets.token_hex(3)[:5],
            export_formats=tuple(ExportFormat(f) for f in run.export_formats),
        )

    def _scheduler(self) -> TrialScheduler | None:
        scheduler: TrialScheduler | None = self._tune.scheduler
        return scheduler

    def _searcher(self) -> Searcher:
        tune = self._tune
        searcher: Searcher
        if tune.search_alg is not None:
            searcher = tune.search_alg
        else:
            samples = UNBOUNDED if tune.num_samples == -1 else tune.num_samples
            searcher = BasicVariantGenerator(
                self._space, num_samples=samples, seed=tune.seed if tune.seed is not None else 0
            )
        if tune.max_concurrent_trials is not None:
            searcher = ConcurrencyLimiter[Searcher](
                searcher, max_concurrent=tune.max_concurrent_trials
            )
        return searcher

    def _executor(self) -> Executor:
        factory: TrainableFactory = functools.partial(make_worker_trainable, self._target)
        run = self._run
        if run.executor == "in_process":
            cpus = float(os.cpu_count() or 1)
            return InProcessExecutor(factory, resources=Resources(cpu=cpus))
        from tunecore.shell.executors.ray import RayExecutor  # noqa: PLC0415 - Ray loads slowly

        return RayExecutor(
            factory,
            address=run.address,
            reuse_actors=self._tune.reuse_actors,
            result_buffer_length=self._tune.result_buffer_length,
        )


def run(
    trainable: Trainable,
    *,
    config: Mapping[str, object] | None = None,
    metric: str | None = None,
    mode: Literal["min", "max"] | None = None,
    num_samples: int = 1,
    scheduler: TrialScheduler | None = None,
    stop: dict[str, float] | None = None,
    name: str | None = None,
    storage_path: str | None = None,
    verbose: int = 1,
) -> ResultGrid:
    """The short form of `Tuner(...).fit()` for the common settings."""
    tuner = Tuner(
        trainable,
        param_space=config,
        tune_config=TuneConfig(
            metric=metric, mode=mode, num_samples=num_samples, scheduler=scheduler
        ),
        run_config=RunConfig(name=name, storage_path=storage_path, stop=stop, verbose=verbose),
    )
    return tuner.fit()


def _output_files(log_to_file: bool | str | tuple[str, str]) -> tuple[str, str] | None:
    """Ray's `log_to_file`: True for `stdout`/`stderr` files in the trial
    directory, a name for both streams in one file, or a pair of names."""
    if log_to_file is True:
        return ("stdout", "stderr")
    if isinstance(log_to_file, str):
        return (log_to_file, log_to_file)
    if isinstance(log_to_file, tuple):
        return log_to_file
    return None


def _mode(mode: str | None) -> Mode | None:
    return None if mode is None else Mode(mode)


def _short(name: str) -> str:
    return Path(name.replace(":", "/")).name or "experiment"
