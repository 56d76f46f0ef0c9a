"""`tunecore run` and `tunecore resume`: an experiment started from the
flags (`Tuner`) or continued from its directory (`Tuner.restore`), run to
its end, with the outcome as an exit code (Ctrl-C included)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic

from tunecore.api.config import FailureConfig, RunConfig, TuneConfig
from tunecore.api.results import ResultGrid
from tunecore.api.searching import SearcherNotGivenError
from tunecore.api.tuner import Tuner
from tunecore.cli.address import check_address
from tunecore.cli.common import as_given, experiment_dir, is_uri
from tunecore.cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, CliError
from tunecore.cli.flags import flag_of, in_flags
from tunecore.cli.interrupts import stopping_cleanly
from tunecore.cli.paths import directory_to_make, experiment_to_write
from tunecore.cli.space import load_param_space, range_bounds, sampled_domains
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.schedulers.registry import SCHEDULERS
from tunecore.model import InvalidFieldError, Mode
from tunecore.search.registry import SEARCHERS
from tunecore.shell.imperative import SchedulerNotGivenError
from tunecore.shell.resume_hint import resume_command_line
from tunecore.shell.storage.resolve import DEFAULT_ROOT, resolve_storage


def _search_alg(args: argparse.Namespace) -> object | None:
    """The searcher `--search` names, built with its defaults (it takes the
    space, metric, mode and seed from the run); nevergrad with Ray's
    example's optimizer, OnePlusOne, and ZOOpt with a budget of
    `--num-samples` trials (Ray's class has no default for either). A
    missing package is an error naming the extra to install; a missing
    --metric or --mode, which every model-based searcher needs, an error
    naming the flag before anything starts (not the searcher's failure
    once the experiment runs)."""
    name: str = args.search
    entry = SEARCHERS.entry(name)
    if entry.default:
        return None  # the core's own
    for flag, value in (("--metric", args.metric), ("--mode", args.mode)):
        if value is None:
            raise CliError(f"--search {name} needs {flag}")
    num_samples: int = args.num_samples
    defaults: dict[str, dict[str, object]] = {
        "nevergrad": {"optimizer": "OnePlusOne"},
        "zoopt": {"budget": num_samples},
    }
    arguments = defaults.get(name, {})
    try:
        searcher: object = entry.resolve()(**arguments)
    except (ImportError, InvalidFieldError) as error:
        raise CliError(f"--search {name}: {error}") from None
    return searcher


_SCHEDULER_OPTIONS = {
    "time_attr": "--time-attr",
    "max_t": "--max-t",
    "perturbation_interval": "--perturbation-interval",
}
"""The scheduler's settings `tunecore run` takes a flag for, with the flag."""


def _scheduler(args: argparse.Namespace, space: dict[str, object]) -> TrialScheduler | None:
    """The scheduler `--scheduler` names with the options given for it (the
    others keep the scheduler's defaults), checked against the objective."""
    name: str = args.scheduler
    options: dict[str, Any] = {}
    for dest, option in _SCHEDULER_OPTIONS.items():
        value = getattr(args, dest)
        if value is None:
            continue
        applies_to = SCHEDULERS.taking(dest)
        if name not in applies_to:
            raise CliError(f"{option} applies to --scheduler {' or '.join(applies_to)} only")
        options[dest] = value
    entry = SCHEDULERS.entry(name)
    if entry.default:
        return None  # the core's own
    make = entry.resolve()
    if args.seed is not None and name in SCHEDULERS.taking("seed"):
        options["seed"] = args.seed
    if name == "pbt":
        options["hyperparam_mutations"] = sampled_domains(space)
        if not options["hyperparam_mutations"]:
            raise CliError(
                "--scheduler pbt mutates the parameters given as a domain such as "
                '{"loguniform": [...]}; the parameter space has none'
            )
    if name == "pb2":
        options["hyperparam_bounds"] = range_bounds(space)
        if not options["hyperparam_bounds"]:
            raise CliError(
                "--scheduler pb2 chooses the parameters given as a numeric range such as "
                '{"uniform": [...]}; the parameter space has none'
            )
    try:
        scheduler: TrialScheduler = make(**options)
        scheduler.with_objective(args.metric, _mode(args.mode))  # needs --metric/--mode?
    except InvalidFieldError as error:
        objective = error.field.rpartition(".")[2]
        if error.value is None and objective in ("metric", "mode"):  # the user gave none
            raise CliError(f"--scheduler {name} needs {flag_of(objective)}") from None
        if objective in options and objective in _SCHEDULER_OPTIONS:  # a flag's value
            raise CliError(
                f"{_SCHEDULER_OPTIONS[objective]}={options[objective]!r} is invalid for "
                f"--scheduler {name}: expected {error.expected}"
            ) from None
        raise CliError(f"--scheduler {name}: {error}") from None
    return scheduler


def _mode(mode: str | None) -> Mode | None:
    return None if mode is None else Mode(mode)


def run_command(args: argparse.Namespace) -> int:
    space = load_param_space(args.param_space) if args.param_space else {}
    _check_storage(args.storage_path, args.name)
    scheduler = _scheduler(args, space)
    check_address("--address", args.address)
    resources = None  # what the trainable asks itself (default_resource_request), or 1 CPU
    if args.cpus_per_trial is not None or args.gpus_per_trial is not None:
        cpus, gpus = args.cpus_per_trial, args.gpus_per_trial
        resources = {"cpu": 1.0 if cpus is None else cpus, "gpu": gpus or 0.0}
    _import_from_cwd()
    with _flag_errors():
        tuner = Tuner(
            args.trainable,
            param_space=space,
            tune_config=TuneConfig(
                metric=args.metric,
                mode=args.mode,
                num_samples=args.num_samples,
                scheduler=scheduler,
                search_alg=_search_alg(args),
                max_concurrent_trials=args.max_concurrent_trials,
                seed=args.seed,
                resources_per_trial=resources,
            ),
            run_config=RunConfig(
                name=args.name,
                storage_path=args.storage_path,
                stop=dict(args.stop) or None,
                failure_config=FailureConfig(max_failures=args.max_failures),
                verbose=args.verbose,
                address=args.address,
                executor=args.executor,
            ),
        )
    return _fit(tuner, args.command, args.trainable, args.address)


def _check_storage(storage_path: str | None, name: str | None) -> None:
    """`--storage-path` names a storage that answers (a URI is resolved and
    its root looked at now, so one that names none or cannot be reached is
    refused naming the flag, not met as a traceback once the run starts), a
    local one (a directory or `file://`) can hold experiments, and `--name`
    is not a file in it."""
    flag = "--storage-path"
    if storage_path is not None and is_uri(storage_path, flag):
        try:
            store = resolve_storage(storage_path)[1]
        except (ValueError, OSError, ImportError) as error:
            raise CliError(as_given(error, storage_path, flag)) from None
        try:
            store.exists("")
        except OSError as error:
            cause = str(error).removeprefix(f"{store.uri()}: ")
            raise CliError(f"{flag} {storage_path}: cannot be reached ({cause})") from None
        if not storage_path.startswith("file:"):
            return
    given = storage_path or DEFAULT_ROOT
    root = directory_to_make(flag, given)
    if name is not None and (root / name).exists() and not (root / name).is_dir():
        raise CliError(f"--name {name}: {root / name} is a file, not a directory")


@contextlib.contextmanager
def _flag_errors(given_dir: str = "") -> Iterator[None]:
    """A bad flag's error as the CLI reports it: pydantic's in the flags'
    names (`_flag_error`), any other ValueError or TypeError as it says,
    the storage of `given_dir` (a resume's DIR) named as typed."""
    try:
        yield
    except pydantic.ValidationError as error:
        raise _flag_error(error) from None
    except (ValueError, TypeError) as error:
        raise CliError(as_given(error, given_dir, "") if given_dir else str(error)) from None


def _flag_error(error: pydantic.ValidationError) -> CliError:
    """pydantic's report (model names, field names, a documentation URL) as
    the flags the user typed: `--num-samples=0 would run nothing; ...`."""
    lines = []
    for problem in error.errors():
        field = str(problem["loc"][0]) if problem["loc"] else ""
        message = str(problem["msg"]).removeprefix("Value error, ")
        translated = in_flags(message)
        if translated != message:
            lines.append(translated)
        else:
            lines.append(f"{flag_of(field)}={problem.get('input')!r} is invalid: {message}")
    return CliError("\n".join(lines))


def resume_command(args: argparse.Namespace) -> int:
    """Resume with the code the user names (`--trainable`), checked against
    the log; the log alone never decides what is imported, so nothing is
    put on sys.path without the flag. DIR may be the experiment's URI:
    the resume then goes on from what is stored there (`Tuner.restore`)."""
    directory: str | Path = args.dir
    if not is_uri(args.dir):
        directory = experiment_dir(args.dir)
        experiment_to_write(directory)
    check_address("--address", args.address)
    if args.trainable is not None:
        _import_from_cwd()
    with _flag_errors(args.dir):
        tuner = Tuner.restore(
            directory,
            args.trainable,
            resume_unfinished=args.resume_unfinished,
            resume_errored=args.resume_errored,
            restart_errored=args.restart_errored,
            address=args.address,
            verbose=args.verbose,
        )
    return _fit(tuner, args.command, args.trainable, args.address)


def _fit(tuner: Tuner, command: str, trainable: str | None, address: str | None) -> int:
    """Run the experiment of `trainable` (MODULE:FUNCTION), on the Ray
    cluster at `address` if one was given; its outcome as an exit code."""
    with stopping_cleanly(command) as interrupted:
        try:
            results = tuner.fit()
        except InvalidFieldError as error:  # the space or the search, found wanting at the start
            raise CliError(str(error)) from None
        except (SearcherNotGivenError, SchedulerNotGivenError) as error:  # a resume's, at its start
            raise CliError(
                f"{error} (from Python: a command line cannot pass an object; resume it "
                "there with Tuner.restore)"
            ) from None
        except ConnectionError as error:  # ray.init's: something answers there, not Ray
            if address is None:
                raise
            raise CliError(f"--address {address}: {error}") from None
    print(f"Experiment directory: {results.experiment_path}")
    if interrupted:
        command = resume_command_line(str(results.experiment_path), trainable, address)
        print(f"Interrupted. Continue it with: {command}")
        return EXIT_INTERRUPTED
    return EXIT_FAILED if _failed(results) else EXIT_OK


def _failed(results: ResultGrid) -> bool:
    """Ray's `tune.run` raises for errored trials; the CLI exits with 1."""
    return results.experiment_error is not None or results.num_errors > 0


def _import_from_cwd() -> None:
    """Import `MODULE:FUNCTION` from the current directory first, as
    `python -m` would (a console script's sys.path starts at its bin/)."""
    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.insert(0, cwd)
