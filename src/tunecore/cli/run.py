"""`tunecore run` and `tunecore resume`: an experiment started from the
flags (`Tuner`) or continued from its directory (`Tuner.restore`), run to
its end, with the outcome as an exit code (Ctrl-C included)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import pydantic

from tunecore.api.config import FailureConfig, RunConfig, TuneConfig
from tunecore.api.results import ResultGrid
from tunecore.api.tuner import Tuner
from tunecore.cli.common import experiment_dir, is_uri
from tunecore.cli.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, CliError
from tunecore.cli.space import load_param_space, range_bounds, sampled_domains
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.model import InvalidFieldError, Mode
from tunecore.schedulers import (
    PB2,
    ASHAScheduler,
    HyperBandScheduler,
    MedianStoppingRule,
    PopulationBasedTraining,
)

SCHEDULERS: dict[str, Callable[..., TrialScheduler] | None] = {
    "fifo": None,  # the core's default
    "asha": ASHAScheduler,
    "hyperband": HyperBandScheduler,
    "median": MedianStoppingRule,
    "pbt": PopulationBasedTraining,
    "pb2": PB2,
}


SEARCHERS: dict[str, str | None] = {
    "random": None,  # the core's BasicVariantGenerator
    "optuna": "tunecore.search.optuna:OptunaSearch",
    "hyperopt": "tunecore.search.hyperopt:HyperOptSearch",
    "bayesopt": "tunecore.search.bayesopt:BayesOptSearch",
}
"""`--search`: each searcher by import path, imported only when chosen."""


def _search_alg(name: str) -> object | None:
    """The searcher `--search` names, built with its defaults (it takes the
    space, metric, mode and seed from the run); a missing package is an
    error naming the extra to install."""
    target = SEARCHERS[name]
    if target is None:
        return None
    module, _, attribute = target.partition(":")
    try:
        searcher: object = getattr(importlib.import_module(module), attribute)()
    except ImportError as error:
        raise CliError(f"--search {name}: {error}") from None
    return searcher


def _scheduler(args: argparse.Namespace, space: dict[str, object]) -> TrialScheduler | None:
    """The scheduler `--scheduler` names with the options given for it (the
    others keep the scheduler's defaults), checked against the objective."""
    name: str = args.scheduler
    options: dict[str, Any] = {}
    for option, dest, applies_to in (
        ("--time-attr", "time_attr", ("asha", "hyperband", "median", "pbt", "pb2")),
        ("--max-t", "max_t", ("asha", "hyperband")),
        ("--perturbation-interval", "perturbation_interval", ("pbt", "pb2")),
    ):
        value = getattr(args, dest)
        if value is None:
            continue
        if name not in applies_to:
            raise CliError(f"{option} applies to --scheduler {' or '.join(applies_to)} only")
        options[dest] = value
    make = SCHEDULERS[name]
    if make is None:
        return None
    if args.seed is not None and name in ("asha", "pbt", "pb2"):
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
        scheduler = make(**options)
        scheduler.with_objective(args.metric, _mode(args.mode))  # needs --metric/--mode?
    except InvalidFieldError as error:
        raise CliError(f"--scheduler {name}: {error}") from None
    return scheduler


def _mode(mode: str | None) -> Mode | None:
    return None if mode is None else Mode(mode)


def run_command(args: argparse.Namespace) -> int:
    space = load_param_space(args.param_space) if args.param_space else {}
    scheduler = _scheduler(args, space)
    resources = None  # what the trainable asks itself (default_resource_request), or 1 CPU
    if args.cpus_per_trial is not None or args.gpus_per_trial is not None:
        cpus, gpus = args.cpus_per_trial, args.gpus_per_trial
        resources = {"cpu": 1.0 if cpus is None else cpus, "gpu": gpus or 0.0}
    _import_from_cwd()
    try:
        tuner = Tuner(
            args.trainable,
            param_space=space,
            tune_config=TuneConfig(
                metric=args.metric,
                mode=args.mode,
                num_samples=args.num_samples,
                scheduler=scheduler,
                search_alg=_search_alg(args.search),
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
    except pydantic.ValidationError as error:
        raise _flag_error(error) from None
    except (ValueError, TypeError) as error:
        raise CliError(str(error)) from None
    return _fit(tuner, args.trainable, args.address)


_RESOURCE_FLAGS = {
    "resources_per_trial['cpu']": "--cpus-per-trial",
    "resources_per_trial['gpu']": "--gpus-per-trial",
}
"""The config fields `run` fills from flags of another name. Every other
field it fills has the flag's name: `num_samples` is `--num-samples`."""


def _flag_error(error: pydantic.ValidationError) -> CliError:
    """pydantic's report (model names, field names, a documentation URL) as
    the flags the user typed: `--num-samples=0 would run nothing; ...`."""
    lines = []
    for problem in error.errors():
        field = str(problem["loc"][0]) if problem["loc"] else ""
        message = str(problem["msg"]).removeprefix("Value error, ")
        named = {f"{field}=": f"--{field.replace('_', '-')}="}
        named.update({f"{key}=": f"{flag}=" for key, flag in _RESOURCE_FLAGS.items()})
        for written, flag in named.items():
            if written in message:
                lines.append(message.replace(written, flag))
                break
        else:
            flag = f"--{field.replace('_', '-')}"
            lines.append(f"{flag}={problem.get('input')!r} is invalid: {message}")
    return CliError("\n".join(lines))


def resume_command(args: argparse.Namespace) -> int:
    """Resume with the code the user names (`--trainable`), checked against
    the log; the log alone never decides what is imported, so nothing is
    put on sys.path without the flag. DIR may be the experiment's URI:
    the resume then goes on from what is stored there (`Tuner.restore`)."""
    directory: str | Path = args.dir if is_uri(args.dir) else experiment_dir(args.dir)
    if args.trainable is not None:
        _import_from_cwd()
    try:
        tuner = Tuner.restore(
            directory,
            args.trainable,
            resume_unfinished=args.resume_unfinished,
            resume_errored=args.resume_errored,
            restart_errored=args.restart_errored,
            address=args.address,
        )
    except (ValueError, TypeError) as error:
        raise CliError(str(error)) from None
    return _fit(tuner, args.trainable, args.address)


def _fit(tuner: Tuner, trainable: str, address: str | None) -> int:
    """Run the experiment of `trainable` (MODULE:FUNCTION), on the Ray
    cluster at `address` if one was given; its outcome as an exit code."""
    with _noticing_interrupts() as interrupted:
        results = tuner.fit()
    print(f"Experiment directory: {results.experiment_path}")
    if interrupted:
        on = "" if address is None else f" --address {address}"
        print(
            "Interrupted. Continue it with: "
            f"tunecore resume {results.experiment_path} --trainable {trainable}{on}"
        )
        return EXIT_INTERRUPTED
    return EXIT_FAILED if _failed(results) else EXIT_OK


def _failed(results: ResultGrid) -> bool:
    """Ray's `tune.run` raises for errored trials; the CLI exits with 1."""
    return results.experiment_error is not None or results.num_errors > 0


@contextlib.contextmanager
def _noticing_interrupts() -> Iterator[list[bool]]:
    """Remember whether Ctrl-C was pressed. The loop turns the
    KeyboardInterrupt into a stop through the core and `fit()` returns
    normally, so the exit code (130) has to be learned here. Only Python's
    default handler in the main thread is wrapped; elsewhere nothing changes."""
    seen: list[bool] = []
    default = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if not default or threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def interrupted(_signum: int, _frame: FrameType | None) -> NoReturn:
        seen.append(True)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupted)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _import_from_cwd() -> None:
    """Import `MODULE:FUNCTION` from the current directory first, as
    `python -m` would (a console script's sys.path starts at its bin/)."""
    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.insert(0, cwd)
