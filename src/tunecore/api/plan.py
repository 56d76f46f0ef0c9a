"""`plan_run`: the decisions a run makes once, from the user's settings.

A pure function of its arguments (the environment comes in as a mapping),
so each decision is tested without Ray, a directory or a `Tuner`:
whether trials are chained on a reused Ray actor and how many (`chain_starts`,
`TUNECORE_CHAIN_STARTS`), whether the chains reach the executor, when a
trial's directory is made, whether a trial runs in its directory
(`RAY_CHDIR_TO_TRIAL_DIR`), where its output goes, whether a missing
metric fails a trial (`TUNE_DISABLE_STRICT_METRIC_CHECKING`), whether the
first Ctrl-C ends the run or raises (`TUNE_DISABLE_SIGINT_HANDLER`), and whether
the search is unseeded and so gets a fresh seed. `api.tuner` assembles the
run around the `RunPlan` it returns; the loop carries it out.
"""

from __future__ import annotations

from collections.abc import Mapping

from tunecore.api.config import RunConfig, TuneConfig
from tunecore.api.searching import searcher_object
from tunecore.core.search import BasicVariantGenerator
from tunecore.shell.run_plan import RunPlan

CHAIN_STARTS = 8
"""Waiting trials chained behind a starting trial on a reused Ray actor
(`core.experiment.chains`): a trial whose function returns quickly costs
the worker no wait for the driver, and the driver one actor call for up to
nine trials; a chain a stop leaves unstarted wastes at most this many runs.
Measured on (a) of the benchmark, 200 one-report trials on 2 CPUs, four
alternating runs each: 0.28-0.31 s with 4, 0.26-0.29 s with 8, 0.33-0.39 s
with 16 (one chain then holds every waiting trial, and the other worker
takes them from it)."""

CHAIN_STARTS_VARIABLE = "TUNECORE_CHAIN_STARTS"
SIGINT_HANDLER_VARIABLE = "TUNE_DISABLE_SIGINT_HANDLER"
CHDIR_VARIABLE = "RAY_CHDIR_TO_TRIAL_DIR"
"""Ray's variable: "0" keeps a trial on Ray workers in the driver's working
directory (`TuneConfig.chdir_to_trial_dir` unset)."""


def plan_run(
    tune: TuneConfig,
    run: RunConfig,
    *,
    executor_kind: str,
    executor_given: bool,
    mirrored: bool,
    own_stopper: bool,
    resuming: bool,
    environ: Mapping[str, str],
) -> RunPlan:
    """The run's plan. `executor_kind` is what the log records as the
    executor (`RunConfig.executor`, or "simulated"); `executor_given`
    whether the workers were handed in ready-made (`RunParts.executor`);
    `mirrored` whether the experiment is shipped to a storage; `own_stopper`
    whether a stopper of the user's own judges the results; `resuming`
    whether the run goes on with a logged experiment (whose config and
    search the log holds). Raises ValueError naming `TUNECORE_CHAIN_STARTS`
    when it is set to anything but a whole number."""
    sync = run.sync_config
    return RunPlan(
        chain_starts=None if resuming else _chain_starts(tune, run, executor_given, environ),
        run_chains=not run.callbacks and not mirrored and not own_stopper,
        trial_dirs_at_once=bool(run.callbacks),
        chdir=_chdir(tune, executor_kind, environ),
        output_files=output_files(run.log_to_file),
        sync_artifacts=sync.sync_artifacts,
        sync_artifacts_on_checkpoint=sync.sync_artifacts_on_checkpoint,
        strict_metrics=environ.get("TUNE_DISABLE_STRICT_METRIC_CHECKING", "0") != "1",
        stop_on_sigint=not _sigint_handler_disabled(environ),
        draws_seed=not resuming and _unseeded(tune),
        mark_files=not resuming and not mirrored,
    )


def output_files(log_to_file: bool | str | tuple[str, str]) -> tuple[str, str] | None:
    """Ray's `log_to_file`: True for `stdout`/`stderr` files in the trial
    directory, a name for both streams in one file, or a pair of names."""
    if log_to_file is True:
        return ("stdout", "stderr")
    if isinstance(log_to_file, str):
        return (log_to_file, log_to_file)
    if isinstance(log_to_file, tuple):
        return log_to_file
    return None


def _chain_starts(
    tune: TuneConfig, run: RunConfig, executor_given: bool, environ: Mapping[str, str]
) -> int:
    """How many waiting trials a starting trial's worker may run after it:
    `CHAIN_STARTS` on Ray's reused actors, `TUNECORE_CHAIN_STARTS` if set
    (0: never)."""
    if run.executor != "ray" or not tune.reuse_actors or executor_given:
        return 0
    value = environ.get(CHAIN_STARTS_VARIABLE)
    if value is None:
        return CHAIN_STARTS
    if not value.strip().isdigit():
        raise ValueError(
            f"{CHAIN_STARTS_VARIABLE}={value!r} is invalid: expected a whole number >= 0 "
            "(0 never chains trials)"
        )
    return int(value)


def _sigint_handler_disabled(environ: Mapping[str, str]) -> bool:
    """`TUNE_DISABLE_SIGINT_HANDLER` read as Ray reads it, a whole number
    (0 when unset; any other leaves Ctrl-C to raise at once)."""
    value = environ.get(SIGINT_HANDLER_VARIABLE, "0")
    try:
        return int(value) != 0
    except ValueError:
        raise ValueError(
            f"{SIGINT_HANDLER_VARIABLE}={value!r} is invalid: expected a whole number "
            "(1: Ctrl-C raises KeyboardInterrupt from fit() at once; 0: the first one ends "
            "the run)"
        ) from None


def _chdir(tune: TuneConfig, executor_kind: str, environ: Mapping[str, str]) -> bool:
    """`TuneConfig.chdir_to_trial_dir`, or unset, Ray's default there."""
    given = tune.chdir_to_trial_dir
    if given is not None:
        return given
    if executor_kind != "ray":
        return False
    return environ.get(CHDIR_VARIABLE, "1") != "0"


def _unseeded(tune: TuneConfig) -> bool:
    """Whether the search has no seed of its own: no `TuneConfig(seed=)`,
    and a searcher object, or the variant generator (the default, or one
    the user made without a space) without its own `seed`. A search the
    user built over a space of its own is left as it is."""
    if tune.seed is not None:
        return False
    chosen = tune.search_alg
    if chosen is None or searcher_object(chosen) is not None:
        return True
    return (
        isinstance(chosen, BasicVariantGenerator)
        and chosen.param_space is None
        and chosen.seed is None
    )
