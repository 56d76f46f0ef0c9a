"""The commands that read an experiment's event log and write nothing to
it (`--truncate` aside): `replay` (verified against the snapshots),
`status`, `simulate` (a what-if under another scheduler) and `plot`."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable
from pathlib import Path

from tunecore.api.plot import collect as collect_curves
from tunecore.api.plot import render as render_curves
from tunecore.api.plot import render_what_if
from tunecore.api.whatif import WHAT_IF_OPTIONS, what_if, what_if_scheduler
from tunecore.cli.common import is_uri, readable
from tunecore.cli.errors import EXIT_OK, CliError
from tunecore.cli.paths import experiment_to_write, file_to_write
from tunecore.core.experiment import ExperimentState
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.schedulers.registry import SCHEDULERS
from tunecore.model import InvalidFieldError, Mode
from tunecore.shell.driver_state import Driver, driver_of
from tunecore.shell.eventlog import CorruptLogError, read_header
from tunecore.shell.interrupts import INTERRUPTED
from tunecore.shell.lock import driver_lock
from tunecore.shell.progress import ProgressReporter, interrupted, unfinished_trials
from tunecore.shell.replay import Replayed, latest, replay
from tunecore.shell.resume_hint import resume_command_line


def _show(state: ExperimentState, shown: str) -> None:
    """The status as the live run shows it: a table in a terminal, the
    plain-text lines otherwise."""
    config = state.config
    ProgressReporter(metric=config.metric, mode=config.mode, experiment_dir=shown).close(state)


def replay_command(args: argparse.Namespace) -> int:
    if args.truncate and is_uri(args.dir):
        raise CliError(
            f"{args.dir}: --truncate cuts a log in place, and a stored log is only read here "
            "(resume the experiment to go on after its last good record)"
        )
    with readable(args.dir) as (directory, shown):
        if args.truncate:
            experiment_to_write(directory)
        # Cutting writes the log: never under a running driver, which would
        # append after the cut on a state the log no longer leads to.
        with driver_lock(directory) if args.truncate else contextlib.nullcontext():
            replayed = _replayed(directory, args.truncate)
    _show(replayed.state, shown)
    print(
        f"Replayed {replayed.records} events: {replayed.snapshots_verified} snapshots "
        f"verified, {replayed.rejected} events rejected (as in the live run)"
    )
    if replayed.torn is not None:
        print(
            f"Left out an incomplete last record at byte offset {replayed.torn.offset} "
            f"({replayed.torn.size} bytes): its writer stopped mid-record"
        )
    return EXIT_OK


def _replayed(directory: Path, truncate: bool) -> Replayed:
    """The replay of `directory`'s log; with `truncate`, a corrupt log is
    cut first (and the cut reported)."""
    try:
        return replay(directory, keep_commands=False, quiet=True)
    except CorruptLogError as error:
        if not truncate:
            raise
        replayed = replay(directory, keep_commands=False, quiet=True, truncate=True)
        print(
            f"Cut {error.path} at byte offset {error.offset}: record {error.record} was "
            "damaged; it and every record after it are kept aside, in "
            + ", ".join(str(path) for path in replayed.set_aside)
        )
        return replayed


def status_command(args: argparse.Namespace) -> int:
    with readable(args.dir) as (directory, shown):
        replayed = latest(directory, quiet=True)
        settings = read_header(directory).settings
        driver = (
            None if replayed.state.done else driver_of(args.dir, directory, settings.sync_period_s)
        )
    _show(replayed.state, shown)
    print(f"{replayed.records} events; the experiment {_progress(replayed.state, driver, shown)}")
    return EXIT_OK


def _progress(state: ExperimentState, driver: Driver | None, shown: str) -> str:
    """Whether the experiment has finished, is running, or waits for a
    resume (`shell.driver_state`)."""
    if interrupted(state):
        why = "Ctrl-C" if state.stopping in (None, INTERRUPTED) else state.stopping
        return (
            f"was interrupted ({why}) with {unfinished_trials(state)} trials not finished, "
            f"and is not running. {_resume(shown)}"
        )
    if state.done:
        return "has finished." if state.stopping is None else f"has finished: {state.stopping}."
    if driver is None:
        return f"is not running (no driver holds it). {_resume(shown)}"
    if driver.running is None:
        return (
            f"has not finished; its {driver.describe()} runs on another host, so whether it "
            f"still runs cannot be told from here. If it is gone: {_resume(shown)}"
        )
    if driver.running:
        renewed = (
            ""
            if driver.renewed_s_ago is None
            else f", which renewed its lease {driver.renewed_s_ago:.0f} s ago"
        )
        return f"is running ({driver.describe()}{renewed})."
    return f"is not running ({driver.describe()} is gone). {_resume(shown)}"


def _resume(shown: str) -> str:
    """How to resume: the code to go on with is the user's to name, never
    the log's (a foreign log's import path is not offered to be run)."""
    return f"Resume it with: {resume_command_line(shown)}"


def simulate_command(args: argparse.Namespace) -> int:
    """A what-if of the recorded experiment under another scheduler."""
    scheduler = _what_if_scheduler(args)
    if args.plot:
        file_to_write("--plot", args.plot)
    with readable(args.source, "--from") as (directory, shown):
        try:
            outcome = what_if(directory, scheduler, metric=args.metric, mode=args.mode)
        except ValueError as error:
            raise CliError(str(error)) from error
    print(f"What-if of {shown} under {args.scheduler} (virtual time, recorded curves):\n")
    print(outcome.table())
    if outcome.what_if.cut_short:
        print(
            "\nCut short (the policy wanted more than was recorded): "
            + ", ".join(outcome.what_if.cut_short)
        )
    if outcome.restarted:
        print(
            "\nBegan again from their first iteration when resumed (no checkpoint), in "
            "the run and in the what-if: " + ", ".join(outcome.restarted)
        )
    if args.plot:
        written = _draw("--plot", Path(args.plot), lambda out: render_what_if(outcome, out))
        print(f"\nDrawn to {written}")
    return EXIT_OK


def _draw(flag: str, out: Path, draw: Callable[[Path], Path]) -> Path:
    """Run a renderer of `tunecore.api.plot` into `out`; a bad or unwritable
    output path is an error naming `flag`, and a missing matplotlib names
    the extra."""
    try:
        return draw(out)
    except ValueError as error:
        raise CliError(f"{flag}: {error}") from error
    except OSError as error:
        raise CliError(f"{flag}: cannot write {str(out)!r}: {error.strerror or error}") from error
    except ImportError as error:
        raise CliError(str(error)) from error


def what_if_help(option: str, meaning: str) -> str:
    takers = SCHEDULERS.taking(option, what_if=True)
    return f"{'/'.join(takers)}: {meaning} (default: the scheduler's)"


def option_flag(option: str) -> str:
    return "--" + option.replace("_", "-")


def _what_if_scheduler(args: argparse.Namespace) -> TrialScheduler:
    """The scheduler `--scheduler` names, with the options given for it; an
    option it does not take is an error naming the flag."""
    given = {
        name: getattr(args, name) for name in WHAT_IF_OPTIONS if getattr(args, name) is not None
    }
    try:
        return what_if_scheduler(args.scheduler, given)
    except InvalidFieldError as error:
        flag = option_flag(error.field.split(".")[-1])
        if error.field in given:
            raise CliError(f"{flag}: --scheduler {args.scheduler} takes no such option") from error
        raise CliError(f"{flag}: {error}") from error


def plot_command(args: argparse.Namespace) -> int:
    """Draw the experiment's curves into --out; by default into the
    experiment directory, or, for a URI (read through a temporary copy,
    gone at exit), into the current directory, so the picture stays."""
    mode = Mode(args.mode) if args.mode else None
    if args.out:  # before a URI's state is fetched for nothing
        file_to_write("--out", args.out)
    with readable(args.dir) as (directory, shown):
        if args.out:
            out = Path(args.out)
        elif is_uri(args.dir):
            out = Path.cwd() / f"{directory.name}-curves.png"
        else:
            out = directory / "curves.png"
        if not args.out:
            file_to_write("--out", out)
        try:
            drawing = collect_curves(directory, metric=args.metric, mode=mode)
        except ValueError as error:
            raise CliError(str(error)) from error
    if (
        args.metric
        and out.suffix.lower() != ".html"
        and not any(curve.xs for curve in drawing.curves.values())
    ):
        # Empty axes in a PNG would look like success (a misspelt key); the
        # page says "no <metric> reported yet" on itself.
        raise CliError(f"{shown}: --metric {args.metric!r}: no trial reported it as a number")
    written = _draw("--out", out, lambda target: render_curves(drawing, target))
    print(f"{shown}: {len(drawing.curves)} trials drawn to {written}")
    return EXIT_OK
