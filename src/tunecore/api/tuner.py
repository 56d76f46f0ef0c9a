"""`Tuner(...).fit()` and `run(...)`: an experiment from the user's settings.

This module only assembles: it turns the validated configs into the core's
`ExperimentConfig`, a searcher and a scheduler, picks the executor, the
storage, the event log, the callbacks and the progress output, and hands
them to the shell's loop with the run's plan. The decisions a run makes
once, before it starts, are the plan's (`tunecore.api.plan.plan_run`, a
pure function); every decision during the run is the core's.

`Tuner.restore(path, trainable)` assembles the same from the experiment's
event log and the code the user passes (checked against the log, which
never decides what is imported: `tunecore.api.restored`): the log is read
once, the state rebuilt from it (the newest snapshot, then the events
after it) and its whole history walked once for what a snapshot does not
keep (`shell.replay.HistoryWalk`), an `ExperimentResumed` event is logged
and applied, the trials' result files are put back in line with the log,
and the loop goes on appending to the same log.

Why one module of over 400 lines: `Tuner`'s surface mirrors Ray Tune's
(`fit`, `restore`, `can_restore`, `get_results`), and a fit or a restore is
one assembly, read from top to bottom.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import inspect
import os
import secrets
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import msgspec

from tunecore._version import __version__
from tunecore.api.callback_states import restore_states, save_states
from tunecore.api.config import (
    CheckpointConfig,
    FailureConfig,
    RunConfig,
    SyncConfig,
    TuneConfig,
    refuse_train_only,
)
from tunecore.api.config_objects import require_objects, split_objects
from tunecore.api.errors import TuneError, trial_error
from tunecore.api.experiment_names import (
    claim_default_name,
    set_aside_earlier_run,
    stored_default_names,
)
from tunecore.api.foreign_searcher import refuse_foreign_searcher
from tunecore.api.loader import load_experiment
from tunecore.api.mutation_space import with_mutated_keys
from tunecore.api.plan import plan_run
from tunecore.api.ray_config import as_param_space
from tunecore.api.ray_dataclass_configs import from_ray_config
from tunecore.api.reporters import CLIReporter
from tunecore.api.reporters import ProgressReporter as UserReporter
from tunecore.api.reporting import UserReporting, prints_its_own
from tunecore.api.restored import Trainable, restored_output_files, restored_trainable
from tunecore.api.results import ResultGrid
from tunecore.api.searching import (
    prepare_search,
    refuse_wrapped_generator_without_space,
    restored_runtime,
    searcher_object,
)
from tunecore.api.spelling import setting
from tunecore.api.tuner_kwargs import apply_tuner_kwargs
from tunecore.core.experiment import (
    ExperimentConfig,
    ExperimentState,
    new_experiment,
    trials_in_order,
)
from tunecore.core.experiment.snapshot import BUILTIN, SnapshotKind, decode_state, encode_state
from tunecore.core.naming import display_name
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.search import BasicVariantGenerator, ConcurrencyLimiter, SearchPolicy
from tunecore.core.search.generator import UNBOUNDED
from tunecore.model import (
    CheckpointPolicy,
    ExperimentResumed,
    ExportFormat,
    Mode,
    TrialState,
    TrialStatus,
)
from tunecore.model.storable import check_storable, encoding_error
from tunecore.shell.allocations import allocator_for
from tunecore.shell.callbacks import (
    Callback,
    CallbackList,
    CSVLoggerCallback,
    JsonLoggerCallback,
    LoggerCallback,
    ResultFiles,
    TensorBoardCallback,
)
from tunecore.shell.eventlog import (
    LOG_FORMAT,
    SIMULATED,
    EventLogWriter,
    LogContents,
    LogError,
    LogHeader,
    RunSettings,
    read_header,
    read_log,
)
from tunecore.shell.executors.base import Executor
from tunecore.shell.executors.host import TrainableFactory
from tunecore.shell.executors.inprocess import InProcessExecutor, this_machine
from tunecore.shell.files_mark import repair_plan
from tunecore.shell.functions import UserFunctions
from tunecore.shell.heap import long_lived_heap_frozen
from tunecore.shell.imperative import SchedulerRuntime, imperative_policy, restored_scheduler
from tunecore.shell.inbox import Inbox
from tunecore.shell.journal import Journal, SnapshotStore
from tunecore.shell.lock import ExperimentLockedError, driver_lock
from tunecore.shell.loop import ExperimentLoop
from tunecore.shell.mirror.mirror import Mirror
from tunecore.shell.mirror.nesting import check_not_nested
from tunecore.shell.mirror.output_fence import put_back_outputs
from tunecore.shell.mirror.remote import StoredExperiment, as_location, experiment_header, is_stored
from tunecore.shell.mirror.upload_fence import names_by_generation
from tunecore.shell.progress import (
    ProgressReporter,
    already_finished,
    final_summary,
    unfinished_trials,
)
from tunecore.shell.ray_schedulers import is_ray_style
from tunecore.shell.replay import HistoryWalk, LoggedResults, Replayed, rebuild
from tunecore.shell.reported_objects import ObjectsByTrial
from tunecore.shell.resume import drop_unrecorded_checkpoints, repair_result_files
from tunecore.shell.resume_hint import resume_command_line
from tunecore.shell.run_plan import LoopParts, RunPlan
from tunecore.shell.searchers import SearcherRuntime
from tunecore.shell.stoppers import StopSetting, plan_stop
from tunecore.shell.storage.layout import ExperimentStorage, experiment_dirname
from tunecore.shell.storage.resolve import resolve_storage, split_experiment
from tunecore.shell.storage.store import StorageSpec, Store, join_uri
from tunecore.shell.trainable import make_worker_trainable, resolve_trainable, trainable_name
from tunecore.shell.trainable.classapi import Trainable as ClassTrainable
from tunecore.shell.trainable.config_objects import ConfigObjects
from tunecore.shell.trainable.resources import plan_resources
from tunecore.shell.trainable.wrappers import publish_parameters
from tunecore.shell.trial_view import Trial, TrialViews, dirname_of


@dataclass(frozen=True)
class RunParts:
    """What a run is assembled from besides the user's settings, for a
    run that is not Ray's or threads' in real time (`tunecore.simulate`):
    given as data, so `Tuner` has one assembly and no hooks to override.
    Each None is the default a `Tuner` made by the user gets."""

    executor: Executor | None = None
    """The workers (None: `RunConfig.executor`'s, made when the run starts)."""
    executor_kind: str | None = None
    """What the log records as the executor (None: `RunConfig.executor`)."""
    clock: Callable[[], float] = time.time
    """Where event timestamps come from."""
    trial_id_prefix: str | None = None
    """The trials' id prefix (None: five random hex digits)."""
    trainable_name: str | None = None
    """What the log names as the trainable (None: the trainable's own name)."""
    write_results: bool = True
    """Whether each trial's result.json, progress.csv and TensorBoard
    events are written (the log holds every result either way)."""
    restore_path: str | None = None
    """A checkpoint directory every trial starts from until it saves one
    of its own (`tunecore.run(restore=...)`, Ray's `tune.run(restore=)`)."""


def _check_arguments(param_space: object, tune_config: object, run_config: object) -> None:
    """Each of `Tuner`'s settings of the type it takes, else a `TypeError`
    naming it and the value (not an `AttributeError` deep inside, or an
    empty `AssertionError`)."""
    given = (
        ("param_space", param_space, Mapping, "a dict of parameters"),
        ("tune_config", tune_config, TuneConfig, "a tunecore.TuneConfig"),
        ("run_config", run_config, RunConfig, "a tunecore.RunConfig"),
    )
    for field, value, kind, expected in given:
        if value is not None and not isinstance(value, kind):
            raise TypeError(
                f"Tuner({field}={value!r}) is invalid: expected {expected}, "
                f"not a {type(value).__name__}"
            )


class Tuner:
    """Tune `trainable` (a function, a `tunecore.Trainable` subclass, a
    registered name or an import path `"module:function"`) over
    `param_space`. `_tuner_kwargs` is Ray's private dict of `tune.run`
    arguments, each set on top of the configs (`tunecore.api.tuner_kwargs`)."""

    def __init__(
        self,
        trainable: Trainable,
        *,
        param_space: Mapping[str, object] | None = None,
        tune_config: TuneConfig | None = None,
        run_config: RunConfig | None = None,
        _tuner_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        param_space = as_param_space(param_space)  # type: ignore[assignment]
        tune_config = from_ray_config(tune_config, TuneConfig)  # type: ignore[assignment]
        run_config = from_ray_config(run_config, RunConfig)  # type: ignore[assignment]
        _check_arguments(param_space, tune_config, run_config)
        if _tuner_kwargs:
            tune_config, run_config, param_space = apply_tuner_kwargs(
                _tuner_kwargs, tune_config or TuneConfig(), run_config or RunConfig(), param_space
            )
        self._target = resolve_trainable(trainable) if isinstance(trainable, str) else trainable
        self._unrunnable: ValueError | None = None
        try:
            self._name = trainable if isinstance(trainable, str) else trainable_name(trainable)
        except ValueError as error:
            # A function of a form no trial can call (`fn(config, data)`
            # before its `with_parameters`): Ray builds such a Tuner and
            # fails only when it runs, and tutorials build one in passing.
            self._unrunnable = error
            self._name = str(getattr(trainable, "__qualname__", "trainable"))
        self._tune = tune_config or TuneConfig()
        space, self._objects = split_objects(param_space or {})  # placeholders stand in
        self._space = with_mutated_keys(space, self._tune.scheduler)
        check_storable("param_space", self._space)  # refused now, not when it is logged
        self._run = run_config or RunConfig()
        refuse_train_only(self._run)
        self._stop = plan_stop(self._run.stop)
        self._resume: ExperimentResumed | None = None
        self._snapshot_kind: SnapshotKind = BUILTIN
        self._resources = plan_resources(self._target, self._tune.resources_per_trial)
        self._results: ResultGrid | None = None
        self._restored_from: Path | None = None
        self._search_runtime: SearcherRuntime | None = None
        self._opened: tuple[Replayed, LogContents, LoggedResults] | None = None
        """A resume's rebuild and the log it read, until its files are repaired."""
        self._search_alg_again: object = None  # a restore's search_alg=
        self._scheduler_again: object = None  # ...its scheduler= (Ray's imperative API)
        self._scheduler_runtime: SchedulerRuntime | None = None
        self._allocation_again: Callable[..., object] | None = None  # ...its allocation function
        self._parts = RunParts()
        self._logged: LoggedResults | None = None  # a resume's, until its files are repaired

    @classmethod
    def restore(
        cls,
        path: str | os.PathLike[str],
        trainable: Trainable | None = None,
        *,
        param_space: Mapping[str, object] | None = None,
        resume_unfinished: bool = True,
        resume_errored: bool = False,
        restart_errored: bool = False,
        callbacks: list[object] | None = None,
        trial_name_creator: Callable[[Trial], str] | None = None,
        trial_dirname_creator: Callable[[Trial], str] | None = None,
        snapshot_kind: SnapshotKind = BUILTIN,
        stop: StopSetting = None,
        address: str | None = None,
        storage_filesystem: object = None,
        search_alg: object = None,
        verbose: int | None = None,
        resources_allocation_function: Callable[..., object] | None = None,
        scheduler: object = None,
    ) -> Tuner:
        """A Tuner that continues the experiment in `path` (after a crash, a
        Ctrl-C, or to retry its errors) when `fit()` is called.

        `path` is the experiment's directory, or its URI in storage
        (`s3://bucket/runs/exp`; `storage_filesystem` as in `RunConfig`):
        a machine with nothing but the URI goes on from what the storage
        holds, shipping there as it runs.

        `trainable` is the code to go on with, as in Ray: the function or
        class the experiment ran (or its registered name, or its import
        path). The log's record of it is only checked against it (a
        mismatch is a `TrainableMismatchError`), never imported; without
        `trainable`, only a name registered in this process
        (`register_trainable`) is found (see `tunecore.api.restored`).
        `search_alg` hands back a searcher object (`tunecore.search.Searcher`)
        whose class cannot rebuild it from the log (one of your own without
        `to_spec`): built as it was, it is fed the log's tells and asks
        again (`tunecore.api.searching`); tunecore's own searchers are
        rebuilt without it. One tunecore cannot drive (built on Ray Tune's
        own `Searcher`) is refused as `TuneConfig` refuses it.
        `resources_allocation_function` hands back the
        function a `ResourceChangingScheduler` resized trials with (the log
        holds its answers, not its code; required when it had one).
        `scheduler` hands back a scheduler of your own written against
        Ray's imperative API (a `FIFOScheduler` or `TrialScheduler`
        subclass; required when the experiment ran one), built as it was:
        its hooks are called again over the log to rebuild its state
        (`tunecore.shell.imperative`); a pure policy is in the log itself.
        `param_space` hands back, as in Ray, what the
        log cannot hold: the functions of its `sample_from`s, which draw
        the values not drawn yet, and its objects (`ray.put` refs, models:
        the log holds placeholders for them), required at the same keys
        before any trial runs (`api.config_objects`); the logged search
        space and searcher state are what run (changing the space on restore is not
        supported, as in Ray). Trials that were running restart from
        their newest persistent checkpoint under the same id; finished ones
        do not run again; the scheduler and the searcher go on from their
        logged state. `resume_unfinished=False` ends unfinished trials
        instead; `resume_errored` retries errored trials from their newest
        checkpoint, `restart_errored` from scratch. Callbacks, name creators
        and the types of your own scheduler or searcher (`snapshot_kind=
        ExperimentSnapshot[MyScheduler, MySearcher]`) are code, which the
        log does not hold: pass them again; so is a stopper of your own
        (`stop=`; thresholds and built-in stoppers are in the log).
        `address` is the Ray cluster to go on in, as `RunConfig(address=)`;
        `verbose` how much it prints, as `RunConfig(verbose=)` (default: as
        the experiment ran).
        The address the experiment ran on is in the log, but a restore never
        joins it by itself (a log alone must not send your code to a
        cluster): without `address`, Ray chooses as `ray.init()` does (the
        cluster this process is connected to, else `RAY_ADDRESS`, else a
        new local Ray), and a warning names the recorded address.
        """
        refuse_foreign_searcher(search_alg, "Tuner.restore.search_alg")
        experiment_dir, storage_path, filesystem = _restore_location(path, storage_filesystem)
        header = read_header(experiment_dir)
        settings = header.settings
        if settings.storage_uri and storage_path is None:
            storage_path, filesystem = settings.storage_uri, storage_filesystem
        if settings.executor == SIMULATED:
            raise LogError(
                f"{experiment_dir} is a simulated experiment: replay it "
                "(tunecore.replay), or run tunecore.simulate again with the same seed"
            )
        tuner = cls(
            restored_trainable(header.trainable, trainable, experiment_dir),
            param_space=param_space,
            tune_config=TuneConfig(
                reuse_actors=settings.reuse_actors,
                result_buffer_length=settings.result_buffer_length,
                chdir_to_trial_dir=settings.chdir_to_trial_dir,
                trial_name_creator=trial_name_creator,
                trial_dirname_creator=trial_dirname_creator,
            ),
            run_config=RunConfig(
                name=experiment_dir.name,
                storage_path=storage_path or str(experiment_dir.parent),
                storage_filesystem=filesystem,
                callbacks=list(callbacks or []),
                verbose=settings.verbose if verbose is None else verbose,
                log_to_file=restored_output_files(settings, experiment_dir) or False,
                address=address,
                executor="in_process" if settings.executor == "in_process" else "ray",
                fsync_interval_ms=settings.fsync_interval_ms,
                stop=stop,
                sync_config=SyncConfig(
                    sync_period=settings.sync_period_s,
                    sync_timeout=settings.sync_timeout_s,
                    sync_artifacts=settings.sync_artifacts,
                    sync_artifacts_on_checkpoint=settings.sync_artifacts_on_checkpoint,
                ),
            ),
        )
        if settings.executor == "ray" and settings.address and address is None:
            _warn_recorded_address(experiment_dir, settings.address)
        if settings.own_stopper is not None and stop is None:
            warnings.warn(
                f"{experiment_dir} ran with a stopper of your own ({settings.own_stopper}); "
                "it is code, which the log does not hold: pass it again as "
                "Tuner.restore(..., stop=...) to keep using it",
                stacklevel=2,
            )
        tuner._name = header.trainable
        tuner._restored_from = experiment_dir
        tuner._snapshot_kind = snapshot_kind
        tuner._search_alg_again = search_alg
        tuner._scheduler_again = scheduler
        tuner._allocation_again = resources_allocation_function
        tuner._resume = ExperimentResumed(
            at=0.0,
            resume_unfinished=resume_unfinished,
            resume_errored=resume_errored,
            restart_errored=restart_errored,
        )
        return tuner

    def fit(self) -> ResultGrid:
        """Run the experiment to its end (or Ctrl-C) and return its results.
        It holds the experiment directory's driver lock while it runs: a
        second driver there raises `ExperimentLockedError`. With a URI
        `storage_path` that directory is the local staging directory, and
        the experiment is shipped to the storage as it runs (`shell.mirror.mirror`).
        While it runs, what existed before it is kept out of the garbage
        collector's full collections (`shell.heap`)."""
        if self._unrunnable is not None:
            raise self._unrunnable
        with long_lived_heap_frozen():
            return self._fit_in_storage()

    def _fit_in_storage(self) -> ResultGrid:
        """`fit()` past its checks: the experiment's storage resolved."""
        run = self._run
        spec, store = resolve_storage(run.storage_path, run.storage_filesystem)
        if spec.mirrored:
            return self._fit_mirrored(spec, store)
        root = Path(spec.uri)
        name = run.name or claim_default_name(root, _short(self._name))
        check_not_nested(store, experiment_dirname(name), self._place_setting())
        if self._resume is None:
            set_aside_earlier_run(root / experiment_dirname(name))
        storage = ExperimentStorage(root, name, background=True)
        with driver_lock(storage.experiment_dir):
            return self._fit(storage)

    def _fit_mirrored(self, spec: StorageSpec, root: Store) -> ResultGrid:
        """`fit()` with the experiment in storage: staged locally, shipped,
        under the staging directory's lock and the storage's lease."""
        given = self._run.name
        names = [given] if given else stored_default_names(root, _short(self._name))
        with contextlib.ExitStack() as held:
            mirror, storage = self._claim_stored(spec, root, names, held)
            try:
                if self._resume is not None:
                    mirror.sync_down()
                    mirror.take_requests()
                else:
                    mirror.clear_staging()  # against the stored log, before it moves
                    if (aside := mirror.set_aside_earlier_run()) is not None:
                        warnings.warn(
                            f"{mirror.store.uri()} held an earlier experiment; it is now in "
                            f"{aside} (continue it with Tuner.restore({aside!r}, ...)). This "
                            "run starts afresh under the name you gave.",
                            stacklevel=4,
                        )
                return self._fit(storage, mirror)
            finally:
                mirror.drop_lease()

    def _place_setting(self) -> str:
        """What set the experiment's place, as an error names it."""
        return "Tuner.restore's path" if self._resume else "RunConfig's storage_path and name"

    def _claim_stored(
        self, spec: StorageSpec, root: Store, names: Iterable[str], held: contextlib.ExitStack
    ) -> tuple[Mirror, ExperimentStorage]:
        """The experiment under the first of `names` whose staging lock
        and lease this driver gets, both then kept in `held`. A name the
        user gave is the only one: another driver's `ExperimentLockedError`
        for it is raised; default names go on to the next."""
        for name in names:
            mirror = Mirror(spec, root, name)
            check_not_nested(root, mirror.name, self._place_setting())
            storage = ExperimentStorage(mirror.staging_root, name, background=True)
            with contextlib.ExitStack() as attempt:
                try:
                    attempt.enter_context(driver_lock(storage.experiment_dir))
                    mirror.take_lease(self._run.sync_config.sync_period)
                except ExperimentLockedError:
                    storage.close()
                    if self._run.name:
                        raise
                    continue
                held.push(attempt.pop_all())
                return mirror, storage
        raise AssertionError("unreachable: a given name raises, default names never end")

    def _fit(self, storage: ExperimentStorage, mirror: Mirror | None = None) -> ResultGrid:
        """`fit()` in the experiment directory, its driver lock held."""
        tune, run = self._tune, self._run
        plan = self._plan(mirrored=mirror is not None)
        state, journal = self._open_log(storage.experiment_dir, plan, mirror)
        if self._resume is not None and _nothing_to_resume(state, self._resume):
            return self._finished_already(state, journal, storage, mirror)
        if (searcher := searcher_object(self._tune.search_alg)) is not None:
            searcher.ran_in(str(storage.experiment_dir) if mirror is None else mirror.store.uri())
        sync = run.sync_config
        shipper = None if mirror is None else mirror.shipper(journal.log_size, sync.sync_period)
        executor = self._parts.executor or self._executor()
        callbacks = self._callbacks(storage)
        views = self._views()
        # The logged config's metric and mode: a restored Tuner is not given them.
        metric, mode = state.config.metric, state.config.mode
        # Where the user asked for it: the URI, not the staging directory.
        location = (
            str(storage.experiment_dir)
            if mirror is None
            else join_uri(mirror.spec.uri, mirror.name)
        )
        own = (
            UserReporting(
                run.progress_reporter,
                views,
                lambda trial: loop.trial_dir(trial.trial_id),
                run.verbose,
            )
            if prints_its_own(run.progress_reporter)
            else None
        )
        reporter = ProgressReporter(
            metric=metric,
            mode=mode,
            verbose=0 if own is not None else run.verbose,
            experiment_dir=location,
            name_of=views.name,
            **_reporter_settings(run.progress_reporter),
        )
        parts = LoopParts(
            executor,
            storage,
            callbacks,
            journal=journal,
            clock=self._parts.clock,
            on_state=reporter.update if own is None else own.tick,
            views=views,
            trial_dirname=dirname_of(tune.trial_dirname_creator),
            resources_of=self._resources.of_config,
            inbox=Inbox(storage.experiment_dir),
            stopper=self._stop.user,
            functions=UserFunctions.of(self._space, self._tune.search_alg, self._tune.scheduler),
            allocator=allocator_for(state.scheduler, self._allocation_again, tune.scheduler),
            searchers=self._search_runtime,
            scheduler_object=self._scheduler_runtime,
            store=None if mirror is None else mirror.store,
            lease_generation=0 if mirror is None else mirror.lease.generation,
            after_shipped=None if shipper is None else shipper.after_shipped,
        )
        loop = ExperimentLoop(state, plan, parts)
        total = _total_trials(state.searcher, tune.num_samples)
        callbacks.setup(stop=run.stop, num_samples=tune.num_samples, total_num_samples=total)
        if own is not None:
            own.setup(total, metric, None if mode is None else mode.value)
        if shipper is not None:
            shipper.on_lost = lambda lost: loop.halt(str(lost))  # another driver took over
            shipper.start()
        shipped = False
        try:
            if self._resume is not None:
                loop.feed([msgspec.structs.replace(self._resume, at=parts.clock())])
                self._files_in_line(storage, loop.state, mirror, journal.records)
                loop.files_repaired()
                loop.tell_restored()
            final = loop.run()
            if self._search_runtime is not None:
                self._search_runtime.finish(final)
        finally:
            save_states(run.callbacks, storage.experiment_dir)
            if shipper is not None:
                shipped = shipper.close(timeout=sync.sync_timeout)
        if shipper is not None and shipper.lost is not None:
            raise shipper.lost
        reporter.close(final)
        if own is not None:
            own.finish(final)
        elif run.verbose:
            print(
                final_summary(
                    final, metric=metric, mode=mode, name_of=views.name, experiment_dir=location
                )
            )
        dirs = loop.hand_over_dirs()
        self._results = _results(
            final,
            dirs,
            storage.experiment_dir,
            mirror,
            shipped=shipped,
            objects=views.objects,
            config_objects=self._objects,
        )
        self._raise_what_stopped(final, location)
        return self._results

    def _views(self) -> TrialViews:
        """The trials as user code sees them, whose results' objects the
        searcher object is told too, as Ray's searchers get them."""
        views = TrialViews(self._tune.trial_name_creator, self._objects)
        if self._search_runtime is not None:
            self._search_runtime.objects = views.objects
        return views

    def _raise_what_stopped(self, final: ExperimentState, location: str) -> None:
        """After the run, with its results kept: the searcher's or the
        scheduler object's failure, or under `fail_fast="raise"` the first
        trial's error, as `fit()` raises them."""
        for role, runtime in (
            ("searcher", self._search_runtime),
            ("scheduler", self._scheduler_runtime),
        ):
            if runtime is not None and runtime.failure is not None:
                raise TuneError(
                    f"The {role} failed: {runtime.failure}\n(the experiment in "
                    f"{location} stopped there; its results and log are kept: "
                    "tuner.get_results(); Tuner.restore runs the trials it cut short again)"
                )
        if self._run.failure_config.fail_fast == "raise" and final.error is not None:
            raise trial_error(
                final.error,
                f"\n(fail_fast='raise': the experiment in {location} "
                "stopped there; its results and log are kept)",
            )

    def _finished_already(
        self,
        state: ExperimentState,
        journal: Journal,
        storage: ExperimentStorage,
        mirror: Mirror | None,
    ) -> ResultGrid:
        """A restore of an experiment that has finished: its results at once,
        and one line saying so. Nothing runs: no Ray, nothing logged, no
        table printed again. Only what a driver killed at the very end
        leaves is put right, as any resume does (result files behind the
        log, checkpoints retention dropped, the user's callbacks told of
        the restore: `_tell_restored`), and shipped to the storage
        (whose staging copy then goes, as after a run: `_results`)."""
        try:
            self._files_in_line(storage, state, mirror)
            self._tell_restored(state, storage)
        finally:
            storage.close()
            journal.close(state)
        shipped, location = True, str(storage.experiment_dir)
        if mirror is not None:
            sync = self._run.sync_config
            shipper = mirror.shipper(journal.log_size, sync.sync_period)
            shipped = shipper.close(timeout=sync.sync_timeout)
            location = join_uri(mirror.spec.uri, mirror.name)
        loaded = load_experiment(storage.experiment_dir, self._snapshot_kind)
        results = _results(
            loaded.state, loaded.dirs, storage.experiment_dir, mirror, shipped=shipped
        )
        if self._run.verbose:
            views = TrialViews(self._tune.trial_name_creator, self._objects)
            print(already_finished(state, location, views.name))
        self._results = results
        return results

    def _tell_restored(self, state: ExperimentState, storage: ExperimentStorage) -> None:
        """A finished experiment's restore runs no loop, but the user's
        callbacks still hear of it (`setup`, `on_experiment_restore`,
        `on_experiment_end`): a tracker's runs of trials that ended in a
        killed driver are caught up here as on any resume."""
        if not self._run.callbacks:
            return
        callbacks = CallbackList(self._run.callbacks)
        self._attach_loggers(storage)
        views = TrialViews(self._tune.trial_name_creator)
        dirname = dirname_of(self._tune.trial_dirname_creator)
        storage.know_recorded(state.trials.values())

        def dir_of(trial: TrialState) -> Path:
            return storage.experiment_dir / storage.trial_dirname_of(trial, dirname)

        trials = [views.of(trial, dir_of) for trial in trials_in_order(state)]
        callbacks.setup(stop=self._run.stop, num_samples=self._tune.num_samples)
        callbacks.on_experiment_restore(trials)
        callbacks.on_experiment_end(trials)

    def _files_in_line(
        self,
        storage: ExperimentStorage,
        state: ExperimentState,
        mirror: Mirror | None,
        records: int | None = None,
    ) -> None:
        """A resume's repair of the trials' files, once its `ExperimentResumed`
        is applied (`state`; `records` events logged in all then, None for a
        finished experiment's restore, which logs nothing). Result files lag
        the log (written off the loop, or stored later than it), so what the
        log has is put back: for the trials the files mark of the newest
        snapshot leaves (`shell.files_mark`), from the events after it; else
        for every trial, from the results the walk took as the log was
        reopened (kept as the resume says: `resume.logged_rows`).
        Checkpoints retention dropped go. On an object store, the trials'
        outputs a paused earlier driver's worker may have overwritten are
        put back from the copies later generations kept (`output_fence`)."""
        dirname = dirname_of(self._tune.trial_dirname_creator)
        opened, self._opened = self._opened, None
        logged, self._logged = self._logged, None  # not kept while the run goes on
        plan = None
        if opened is not None and mirror is None and records is not None:
            rebuilt, contents, tail = opened
            snapshot = rebuilt.snapshot
            # Only the resume's own event logged since: the rebuild saw every other.
            if snapshot is not None and records == len(contents.events) + 1:

                def path_of(trial: TrialState) -> Path:
                    return storage.experiment_dir / storage.trial_dirname_of(trial, dirname)

                plan = repair_plan(
                    snapshot.files,
                    rebuilt.snapshot_state or rebuilt.state,
                    after=contents.events[snapshot.records :],
                    stepped=rebuilt.state,
                    reported=tail.by_trial,
                    now=state,
                    path_of=path_of,
                )
        if plan is not None:
            repair_result_files(storage, state, dirname, plan.logged, only=plan.trials)
        else:
            walked = logged if logged is not None else self._walked_results(storage)
            repair_result_files(storage, state, dirname, walked.by_trial)
        drop_unrecorded_checkpoints(
            storage,
            state,
            dirname,
            None if mirror is None else mirror.store,
            only=None if plan is None else plan.checkpoints,
            generation=(
                mirror.lease.generation
                if mirror is not None and names_by_generation(mirror.store)
                else 0
            ),
        )
        if mirror is not None and names_by_generation(mirror.store):
            trial_dirs = {storage.trial_dirname_of(t, dirname) for t in state.trials.values()}
            put_back_outputs(mirror.store, mirror.lease.generation, trial_dirs)

    def _walked_results(self, storage: ExperimentStorage) -> LoggedResults:
        """Every result of the log, read and walked again: for a resume
        whose snapshot has a files mark that cannot vouch after all (made
        in another boot, a resume logged after it, files that no longer
        match it, an event besides the resume's own logged as it started),
        since the walk as the log was reopened leaves the results out
        wherever the snapshot has a mark (`_reopen_log`)."""
        history = HistoryWalk(read_log(storage.experiment_dir, quiet=True), self._snapshot_kind)
        results = LoggedResults()
        history.register(results)
        history.run()
        return results

    def get_results(self) -> ResultGrid:
        """The results `fit()` returned; for a Tuner from `Tuner.restore`
        that has not run, the experiment's results as its directory holds
        them."""
        if self._results is not None:
            return self._results
        if self._restored_from is not None:
            return self._stored_results(self._restored_from)[1]
        raise RuntimeError(
            "this Tuner has no results yet: call fit() first (or Tuner.restore(path, trainable) "
            "for an experiment run before)"
        )

    def _stored_results(self, directory: Path) -> tuple[ExperimentState, ResultGrid]:
        """The state and the results of the experiment in `directory` (for
        one in storage, its staging directory), as its log has them."""
        loaded = load_experiment(directory, self._snapshot_kind)
        spec, root = resolve_storage(self._run.storage_path, self._run.storage_filesystem)
        stored = None
        if spec.mirrored:  # the staging directory of an experiment in storage
            stored = StoredExperiment.named(spec.uri, root, loaded.path.name, loaded.path)
        results = ResultGrid.from_state(loaded.state, loaded.dirs, loaded.path, stored=stored)
        return loaded.state, results

    @staticmethod
    def can_restore(path: str | os.PathLike[str], storage_filesystem: object = None) -> bool:
        """Whether `path` (`~` expanded; or the experiment's URI, or its path
        in `storage_filesystem`) holds an experiment `Tuner.restore` can
        continue: its event log, with a readable header, of a run that was
        not simulated. Of a URI only the stored event log is read."""
        try:
            header = experiment_header(path, storage_filesystem)
        except (OSError, LogError):
            return False
        return header.settings.executor != SIMULATED

    # -- assembling ---------------------------------------------------------

    def _open_log(
        self, experiment_dir: Path, plan: RunPlan, mirror: Mirror | None = None
    ) -> tuple[ExperimentState, Journal]:
        """The starting state and the journal: a new log, or the state the
        existing log rebuilds, with the journal appending to it."""
        snapshots = SnapshotStore(experiment_dir)
        if self._resume is not None:
            return self._reopen_log(experiment_dir, snapshots, mirror)
        built = new_experiment(
            self._experiment_config(plan),
            self._scheduler(),
            self._searcher(plan),
            self._stop.builtin,
            metric_owner=setting("TuneConfig", "metric"),
        )
        try:  # a value the log cannot store (a metric name with a lone surrogate)
            initial = encode_state(built)
        except (OverflowError, UnicodeEncodeError, RecursionError) as error:
            raise encoding_error("the experiment", built, error) from error
        header = LogHeader(
            format=LOG_FORMAT,
            tunecore_version=__version__,
            name=experiment_dir.name,
            trainable=self._name,
            settings=self._settings(plan),
            initial_state=initial,
        )
        if mirror is not None:
            settings = msgspec.structs.replace(header.settings, storage_uri=mirror.spec.uri)
            header = msgspec.structs.replace(header, settings=settings)
        state = _as_replay_starts(built, initial)
        try:
            writer = EventLogWriter.create(experiment_dir, header)
        except (OverflowError, UnicodeEncodeError) as error:
            raise encoding_error("the experiment's settings", header, error) from error
        except FileExistsError:
            raise LogError(
                f"{experiment_dir} already holds an experiment. Continue it with "
                f"Tuner.restore({str(experiment_dir)!r}, trainable) (or "
                f"`{resume_command_line(str(experiment_dir), self._name)}`), or give this one "
                f"another {setting('RunConfig', 'name')}."
            ) from None
        return state, Journal(writer, snapshots)

    def _reopen_log(
        self, experiment_dir: Path, snapshots: SnapshotStore, mirror: Mirror | None
    ) -> tuple[ExperimentState, Journal]:
        """`_open_log` of a resume. The log is read once (each event decoded
        as it is first read): the state is rebuilt from its newest snapshot
        on, and what needs the whole history (a searcher object's asks; the
        results the files are repaired from, unless the snapshot's files
        mark leaves only the events after it to read: `_files_in_line`) is
        taken in one walk from its first event (`HistoryWalk`), each reader
        registering its visitor first."""
        kind = self._snapshot_kind
        contents = read_log(experiment_dir, covered=snapshots.covered(), lazy=True)
        snapshots.set_aside_beyond(contents)
        tail = LoggedResults()  # the results after the snapshot, for the files' repair
        rebuilt = rebuild(contents, experiment_dir, kind, tail)
        self._opened = rebuilt, contents, tail
        require_objects(rebuilt.state, self._objects)  # given again, before a trial runs
        history = HistoryWalk(contents, kind)
        self._search_runtime = restored_runtime(
            history, rebuilt.state.searcher, self._search_alg_again, self._space or None
        )
        self._scheduler_runtime = restored_scheduler(history, rebuilt.state, self._scheduler_again)
        marked = rebuilt.snapshot is not None and rebuilt.snapshot.files is not None
        if mirror is not None or not marked:
            self._logged = LoggedResults()
            history.register(self._logged)
        history.run()
        writer = EventLogWriter.reopen(contents, self._run.fsync_interval_ms)
        journal = Journal(writer, snapshots, records=rebuilt.records, digest=rebuilt.digest)
        return rebuilt.state, journal

    def _plan(self, *, mirrored: bool) -> RunPlan:
        """The run's decisions (`api.plan`), made once as it starts."""
        return plan_run(
            self._tune,
            self._run,
            executor_kind=self._parts.executor_kind or self._run.executor,
            executor_given=self._parts.executor is not None,
            mirrored=mirrored,
            own_stopper=self._stop.user is not None,
            resuming=self._resume is not None,
            environ=os.environ,
        )

    def _settings(self, plan: RunPlan) -> RunSettings:
        run, tune = self._run, self._tune
        return RunSettings(
            executor=self._parts.executor_kind or run.executor,
            address=run.address,
            reuse_actors=tune.reuse_actors,
            result_buffer_length=tune.result_buffer_length,
            output_files=plan.output_files,
            chdir_to_trial_dir=plan.chdir,
            verbose=run.verbose,
            fsync_interval_ms=run.fsync_interval_ms,
            own_stopper=None if self._stop.user is None else self._stop.user.describe(),
            sync_period_s=run.sync_config.sync_period,
            sync_timeout_s=run.sync_config.sync_timeout,
            sync_artifacts=run.sync_config.sync_artifacts,
            sync_artifacts_on_checkpoint=run.sync_config.sync_artifacts_on_checkpoint,
        )

    def _experiment_config(self, plan: RunPlan) -> ExperimentConfig:
        tune, run = self._tune, self._run
        checkpoints: CheckpointConfig = run.checkpoint_config
        failures: FailureConfig = run.failure_config
        return ExperimentConfig(
            trainable_name=self._name,
            metric=tune.metric,
            mode=_mode(tune.mode),
            stopping_criterion=self._stop.criteria,
            checkpoint_policy=CheckpointPolicy(
                frequency=checkpoints.checkpoint_frequency,
                at_end=(
                    checkpoints.checkpoint_at_end
                    if checkpoints.checkpoint_at_end is not None
                    else inspect.isclass(self._target) and issubclass(self._target, ClassTrainable)
                ),
                num_to_keep=checkpoints.num_to_keep,
                score_attribute=checkpoints.checkpoint_score_attribute,
                score_order=Mode(checkpoints.checkpoint_score_order),
            ),
            resources_per_trial=self._resources.fixed,
            resources_from_config=self._resources.of_config is not None,
            chain_starts=plan.chain_starts or 0,
            max_failures=failures.max_failures,
            fail_fast=bool(failures.fail_fast),
            max_pending_trials=tune.max_pending_trials or 16,
            time_budget_s=tune.time_budget_s,
            # A searcher object suggests without end: Ray's num_samples bounds its trials.
            max_trials=(
                tune.num_samples
                if searcher_object(tune.search_alg) is not None and tune.num_samples != -1
                else None
            ),
            trial_id_prefix=self._parts.trial_id_prefix or secrets.token_hex(3)[:5],
            checked_metrics=None if plan.strict_metrics else {},
            export_formats=tuple(ExportFormat(f) for f in run.export_formats),
            restore_path=self._parts.restore_path,
        )

    def _callbacks(self, storage: ExperimentStorage) -> CallbackList:
        """The result writers and the user's callbacks; a resumed run first
        hands the user's the states its last run saved (`callback_states`)."""
        restore_states(self._run.callbacks if self._resume else [], storage.experiment_dir)
        return CallbackList([*self._result_writers(storage), *self._run.callbacks])

    def _attach_loggers(self, storage: ExperimentStorage) -> None:
        """Give the user's `LoggerCallback`s the experiment's storage, where
        they find each trial's directory."""
        for callback in self._run.callbacks:
            if isinstance(callback, LoggerCallback):
                callback.attach(storage)

    def _result_writers(self, storage: ExperimentStorage) -> list[Callback]:
        """The loggers that write each trial's result.json and progress.csv
        (tunecore reads them back: always on) and, as in Ray Tune, its
        TensorBoard events when tensorboardX is installed and
        `TUNE_DISABLE_AUTO_CALLBACK_LOGGERS` is not 1, as one `ResultFiles`.
        A logger of one of these kinds among the user's callbacks replaces
        that file of the default."""
        if not self._parts.write_results:
            return []
        given = self._run.callbacks
        self._attach_loggers(storage)

        def missing(kind: type[ResultFiles]) -> bool:
            return not any(isinstance(c, kind) for c in given)

        tensorboard = (
            os.environ.get("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "0") != "1"
            and importlib.util.find_spec("tensorboardX") is not None
            and missing(TensorBoardCallback)
        )
        json, csv = missing(JsonLoggerCallback), missing(CSVLoggerCallback)
        if not (json or csv or tensorboard):
            return []
        return [ResultFiles(storage, json=json, csv=csv, tensorboard=tensorboard)]

    def _scheduler(self) -> TrialScheduler | None:
        """The scheduler for a new experiment: the user's policy, or the
        core's place for a scheduler object in Ray's style, whose runtime
        (`shell.imperative`) the loop then calls."""
        scheduler: object = self._tune.scheduler
        if not is_ray_style(scheduler):
            return cast(TrialScheduler | None, scheduler)
        self._scheduler_runtime = SchedulerRuntime(scheduler)
        return imperative_policy(scheduler, self._tune.metric, _mode(self._tune.mode))

    def _searcher(self, plan: RunPlan) -> SearchPolicy:
        """The search: the user's `search_alg`, or a `BasicVariantGenerator`
        over the param space. An unseeded one (`RunPlan.draws_seed`) gets a
        fresh seed, printed so the run can be repeated (it is in the log
        header with the search)."""
        tune = self._tune
        seed = self._announced_seed() if plan.draws_seed else tune.seed
        samples = UNBOUNDED if tune.num_samples == -1 else tune.num_samples
        searcher: SearchPolicy
        chosen = tune.search_alg
        limit = tune.max_concurrent_trials
        if searcher_object(chosen) is not None:
            if limit is not None:  # Ray's order: the searcher hears the limiter's bound
                chosen = ConcurrencyLimiter(chosen, max_concurrent=limit)
                limit = None
            assert seed is not None  # an unseeded searcher object draws one (`draws_seed`)
            prepared = prepare_search(
                chosen,
                metric=tune.metric,
                mode=_mode(tune.mode),
                param_space=self._space,
                seed=seed,
            )
            assert prepared is not None  # searcher_object found one
            self._search_runtime = prepared.runtime
            searcher = prepared.policy
        elif chosen is None or (
            isinstance(chosen, BasicVariantGenerator) and chosen.param_space is None
        ):
            generator = chosen if chosen is not None else BasicVariantGenerator()
            searcher = generator.with_space(self._space, num_samples=samples, seed=seed or 0)
        else:
            refuse_wrapped_generator_without_space(chosen)
            searcher = chosen
        if limit is not None:
            searcher = ConcurrencyLimiter[SearchPolicy](searcher, max_concurrent=limit)
        return searcher

    def _announced_seed(self) -> int:
        """A fresh seed for a search the user did not seed, printed so that
        the run can be repeated (it is in the log header with the search)."""
        seed = self._fresh_seed()
        if self._run.verbose:
            print(f"Search seed: {seed} (pass {setting('TuneConfig', 'seed', seed)} to repeat)")
        return seed

    def _fresh_seed(self) -> int:
        """A seed for a search the user did not seed. Drawn from NumPy's
        global generator when the script has used it, as Ray's search
        samples from it: after `np.random.seed(1234)` the run repeats (Ray's
        FAQ recipe); otherwise from the OS. (NumPy loads `numpy.random` on
        first use only, 6 ms, and Ray imports NumPy: a script that never
        touched its global generator cannot have seeded it.)"""
        numpy_random = sys.modules.get("numpy.random")
        if numpy_random is not None:
            return int(numpy_random.randint(0, 2**31))
        return secrets.randbelow(2**31)

    def _executor(self) -> Executor:
        factory: TrainableFactory = functools.partial(
            make_worker_trainable, self._target, objects=self._objects
        )
        run = self._run
        if run.executor == "in_process":
            return InProcessExecutor(factory, resources=this_machine())
        from tunecore.shell.executors.ray import RayExecutor  # noqa: PLC0415 - Ray loads slowly

        executor = RayExecutor(
            factory,
            address=run.address,
            reuse_actors=self._tune.reuse_actors,
            result_buffer_length=self._tune.result_buffer_length,
        )
        publish_parameters(self._target)  # Ray is up: with_parameters objects go in its store
        self._objects.publish()  # and the param space's
        return executor


def with_parts(
    parts: RunParts,
    trainable: Trainable,
    *,
    param_space: Mapping[str, object] | None,
    tune_config: TuneConfig,
    run_config: RunConfig,
) -> Tuner:
    """A `Tuner` assembled from `parts` where they are given."""
    tuner = Tuner(
        trainable, param_space=param_space, tune_config=tune_config, run_config=run_config
    )
    tuner._parts = parts
    if parts.trainable_name is not None:
        tuner._name = parts.trainable_name
    return tuner


def _restore_location(
    path: str | os.PathLike[str], storage_filesystem: object
) -> tuple[Path, str | None, object]:
    """Where `Tuner.restore(path)` finds the log: the directory itself, or
    for a URI the staging directory, brought up to date from the storage
    (under its driver lock); and the storage to go on in (None: the
    directory's parent, as before)."""
    if not is_stored(path, storage_filesystem):
        return Path(path).expanduser().resolve(), None, None
    if storage_filesystem is None:
        root_uri, name = split_experiment(os.fspath(as_location(path)))
    else:  # a path inside the filesystem, never looked up on this disk
        root_uri, name = split_experiment(os.fspath(path), in_filesystem=True)
    spec, root = resolve_storage(root_uri, storage_filesystem)
    mirror = Mirror(spec, root, name)
    mirror.staging_dir.mkdir(parents=True, exist_ok=True)
    with driver_lock(mirror.staging_dir):
        mirror.sync_down()
    return mirror.staging_dir, root_uri, storage_filesystem


def _warn_recorded_address(experiment_dir: Path, recorded: str) -> None:
    """Say which cluster the log records, unless `RAY_ADDRESS` chose one."""
    if os.environ.get("RAY_ADDRESS"):
        return
    warnings.warn(
        f"{experiment_dir} ran on the Ray cluster at {recorded!r}; a restore never "
        "joins the cluster a log names by itself, so it goes on with the Ray this "
        "process is connected to, or a new local one. To go on there, pass "
        f"Tuner.restore(..., address={recorded!r}) (tunecore resume --address), "
        "or set RAY_ADDRESS",
        stacklevel=3,
    )


def _reporter_settings(given: UserReporter | None) -> dict[str, Any]:
    """The `ProgressReporter` settings a user's `CLIReporter` asks for."""
    if not isinstance(given, CLIReporter):
        return {}
    return {
        "columns": given.columns,
        "max_rows": given.max_progress_rows,
        "plain_refresh_s": given.max_report_frequency,
        "overwrite": given.overwrite,
        "intermediate": given.print_intermediate_tables is not False,
    }


def _results(
    final: ExperimentState,
    dirs: Mapping[str, str | os.PathLike[str]],
    experiment_dir: Path,
    mirror: Mirror | None,
    *,
    shipped: bool,
    objects: ObjectsByTrial | None = None,
    config_objects: ConfigObjects | None = None,
) -> ResultGrid:
    """The results of a run that has ended in `experiment_dir`, showing the
    `objects` its trials reported where JSON could not hold them, and the
    param space's `config_objects` where their configs name them. Of one in
    storage that holds all of it (`shipped`) and is a local directory
    (`file://`), the staging copy goes and the results read the stored
    files (`Mirror.drop_staging`)."""
    if mirror is None:
        return ResultGrid.from_state(
            final, dirs, experiment_dir, objects=objects, config_objects=config_objects
        )
    kept_at = mirror.drop_staging() if shipped else None
    if kept_at is not None:
        dirs = {t: kept_at / Path(d).relative_to(experiment_dir) for t, d in dirs.items()}
        experiment_dir = kept_at
    stored = StoredExperiment.named(mirror.spec.uri, mirror.root, mirror.name, experiment_dir)
    return ResultGrid.from_state(
        final,
        dirs,
        experiment_dir,
        stored=stored,
        objects=objects,
        config_objects=config_objects,
    )


def _nothing_to_resume(state: ExperimentState, resume: ExperimentResumed) -> bool:
    """Whether a restore of the experiment in `state` has nothing to run:
    it has finished by itself (its search done, nothing stopped it: a
    resume goes on after an interrupt, a time budget or a stopper), with
    every trial finished, and no errored trial is to be retried."""
    trials = state.trials.values()
    if not state.done or state.stopping is not None or unfinished_trials(state):
        return False
    retry = resume.resume_errored or resume.restart_errored
    return not (retry and any(trial.status is TrialStatus.ERROR for trial in trials))


def _as_replay_starts(built: ExperimentState, encoded: bytes) -> ExperimentState:
    """The state replay will start from: `built` decoded from its log
    header. A policy given an int where it keeps a float (`grace_period=2`)
    decodes to the float, and must run as it will replay. A user's own
    policy type, which the built-in decoder does not know, runs as built."""
    try:
        return decode_state(encoded)
    except msgspec.ValidationError:
        return built


def _total_trials(searcher: object, num_samples: int) -> int | None:
    """How many trials the search makes in all, as `Callback.setup` is told:
    a variant generator knows (its grid times `num_samples`), a searcher
    makes `num_samples`; None when unbounded (`num_samples=-1`). A
    concurrency limit changes nothing (Ray's `max_concurrent_trials` is the
    generator's own `max_concurrent`)."""
    while isinstance(searcher, ConcurrencyLimiter):
        searcher = searcher.searcher
    total = getattr(searcher, "total", None)
    if isinstance(total, int):
        return total
    return num_samples if num_samples > 0 else None


def _mode(mode: str | None) -> Mode | None:
    return None if mode is None else Mode(mode)


def _short(name: str) -> str:
    """The trainable's name in a default experiment name: as users know it
    (`display_name`: `train` for `pkg.module:train` or for
    `with_parameters(train)`), as Ray names the experiment."""
    return display_name(name).replace("/", "_") or "experiment"
