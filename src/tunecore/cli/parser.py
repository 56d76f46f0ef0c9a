"""The arguments of the `tunecore` command: its parser, with each
command's flags and help texts, and the function that runs the command."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from typing import Any, NoReturn

from tunecore.api.whatif import WHAT_IF_OPTIONS
from tunecore.cli.dashboard import dashboard_command
from tunecore.cli.demo import demo_command, transitions_command
from tunecore.cli.log import (
    option_flag,
    plot_command,
    replay_command,
    simulate_command,
    status_command,
    what_if_help,
)
from tunecore.cli.requests import add_command, stop_command
from tunecore.cli.run import resume_command, run_command
from tunecore.cli.space import PARAM_SPACE_HELP
from tunecore.core.schedulers.registry import SCHEDULERS
from tunecore.search.registry import SEARCHERS


class Parser(argparse.ArgumentParser):
    """An `ArgumentParser` that keeps, in attributes of its own, what
    argparse keeps only in private ones: the arguments added to it and its
    sub-commands' parsers by name (`refuse_undecodable` looks at each)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.arguments: list[argparse.Action] = []  # before argparse adds --help
        self.commands: dict[str, Parser] = {}
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.arguments.append(action)
        return action

    def subcommand(self, name: str, **kwargs: Any) -> Parser:
        """The parser of the sub-command `name`, the command line's first
        word (`args.command`); the first call adds that word. It takes no
        abbreviated flags (`--num-sample` is not `--num-samples`), and sets
        itself as `args.parser`, for its usage in errors."""
        if not self.commands:
            self.command_word = self.add_subparsers(
                dest="command",
                required=True,
                metavar="COMMAND",
                help="one of these (tunecore COMMAND --help: its options)",
            )
        parser = self.command_word.add_parser(name, allow_abbrev=False, **kwargs)
        parser.set_defaults(parser=parser)
        self.commands[name] = parser
        return parser


def _stop_criterion(text: str) -> tuple[str, float | bool]:
    """`KEY=NUMBER`, or `KEY=true`/`KEY=false` for a flag (`done=true`)."""
    key, equals, value = text.partition("=")
    flags = {"true": True, "false": False}
    try:
        if not key or not equals:
            raise ValueError
        if value.strip().lower() in flags:
            return key, flags[value.strip().lower()]
        return key, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not KEY=NUMBER or KEY=true/false (e.g. training_iteration=100)"
        ) from None


def _given(text: str) -> str:
    """A value that must say something (a path, a name, a key): an empty
    or blank one (`DIR ""`, an unset shell variable) is refused here, in
    the argument's name, not met later as a traceback or taken as unset."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is empty")
    return text


def _add_verbose(command: argparse.ArgumentParser, default: int | None, default_help: str) -> None:
    command.add_argument(
        "--verbose",
        type=int,
        default=default,
        choices=range(4),
        metavar="V",
        help=f"0: silent; 1 to 3: the status while it runs, a summary at the end ({default_help})",
    )


def parse_arguments(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None
) -> argparse.Namespace:
    """`parser.parse_args`, but an argument no command takes is reported
    with the command's usage, not the top level's, and with the flag it
    was probably meant to be: `--num-sample` -> did you mean --num-samples?"""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _unrecognized(args.parser, unknown)
    return args


def _unrecognized(command: Parser, unknown: list[str]) -> NoReturn:
    flags = [flag for action in command.arguments for flag in action.option_strings]
    message = f"unrecognized arguments: {' '.join(unknown)}"
    for given in unknown:
        if given.startswith("-"):
            close = difflib.get_close_matches(given.partition("=")[0], flags, n=1, cutoff=0.6)
            if close:
                message += f" (did you mean {close[0]}?)"
                break
    command.error(message)


def _add_run(parser: Parser) -> None:
    run = parser.subcommand(
        "run",
        help="start an experiment",
        description="Tune MODULE:FUNCTION (a training function or a Trainable class,\n"
        "imported with the current directory on the path) over the parameter space in FILE.",
        epilog=PARAM_SPACE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "trainable",
        metavar="MODULE:FUNCTION",
        type=_given,
        help="the training function or Trainable class to tune, e.g. train:objective",
    )
    run.add_argument(
        "--param-space", metavar="FILE", type=_given, help="TOML or JSON (format below)"
    )
    run.add_argument("--metric", type=_given, help="the result key to optimise")
    run.add_argument("--mode", choices=("min", "max"), help="minimise or maximise --metric")
    run.add_argument(
        "--num-samples",
        type=int,
        default=1,
        metavar="N",
        help="samples of the space (per grid point); -1: until stopped (default 1)",
    )
    run.add_argument(
        "--search",
        choices=SEARCHERS.choices(),
        default="random",
        help="how configs are chosen (default random: grid and random sampling); optuna "
        "(TPE), hyperopt, bayesopt, nevergrad (OnePlusOne) and zoopt (a budget of "
        "--num-samples) model the results so far and need --metric and "
        "--mode and their extra (pip install 'tunecore[search]')",
    )
    run.add_argument(
        "--max-concurrent-trials",
        type=int,
        metavar="N",
        help="run at most N trials at once (default: as many as fit)",
    )
    run.add_argument(
        "--scheduler",
        choices=SCHEDULERS.choices(),
        default="fifo",
        help="trial scheduler (default fifo); asha, hyperband, median, pbt and pb2 "
        "need --metric and --mode",
    )
    run.add_argument(
        "--time-attr",
        metavar="KEY",
        type=_given,
        help="the result key schedulers measure progress in (default: the "
        "scheduler's own, training_iteration or time_total_s)",
    )
    run.add_argument(
        "--max-t", type=float, metavar="T", help="asha/hyperband: the most --time-attr a trial gets"
    )
    run.add_argument(
        "--perturbation-interval",
        type=float,
        metavar="T",
        help="pbt, pb2: how much --time-attr between exploits (default 60)",
    )
    run.add_argument(
        "--stop",
        type=_stop_criterion,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="stop a trial once its result KEY reaches VALUE (number or true/false; repeatable)",
    )
    run.add_argument(
        "--name",
        type=_given,
        help="the experiment's directory name (default: FUNCTION and the date)",
    )
    run.add_argument(
        "--storage-path",
        metavar="PATH",
        type=_given,
        help="where experiment directories go (default ~/tunecore_results)",
    )
    run.add_argument(
        "--max-failures",
        type=int,
        default=0,
        metavar="N",
        help="retries per failing trial; -1: forever (default 0)",
    )
    run.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="seed of the search (and of asha's, pbt's and pb2's draws)",
    )
    run.add_argument(
        "--executor",
        choices=("ray", "in_process"),
        default="ray",
        help="ray actors (default), or threads in this process for debugging",
    )
    run.add_argument(
        "--address",
        metavar="ADDR",
        type=_given,
        help="the Ray cluster to connect to (default: start a local Ray)",
    )
    run.add_argument("--cpus-per-trial", type=float, metavar="C", help="default 1")
    run.add_argument("--gpus-per-trial", type=float, metavar="G", help="default 0")
    _add_verbose(run, 1, "default 1")
    run.set_defaults(handler=run_command)


def _add_resume(parser: Parser) -> None:
    resume = parser.subcommand(
        "resume",
        help="continue an experiment (after a crash or Ctrl-C)",
        description="Continue the experiment in DIR from its event log with the code "
        "given by --trainable: finished trials do not run again, unfinished ones restart "
        "from their newest checkpoint.",
    )
    resume.add_argument("dir", metavar="DIR", type=_given, help=_DIR_HELP)
    resume.add_argument(
        "--resume-errored",
        action="store_true",
        help="retry errored trials from their newest checkpoint",
    )
    resume.add_argument(
        "--restart-errored", action="store_true", help="retry errored trials from scratch"
    )
    resume.add_argument(
        "--no-resume-unfinished",
        dest="resume_unfinished",
        action="store_false",
        help="end unfinished trials instead of resuming",
    )
    resume.add_argument(
        "--trainable",
        metavar="MODULE:FUNCTION",
        type=_given,
        help="the code to go on with (a training function or a Trainable class), "
        "imported with the current directory first on the path; it must be the one "
        "the log records. Needed: the name in the log is only checked, never "
        "imported, and nothing is put on the path without this flag",
    )
    resume.add_argument(
        "--address",
        metavar="ADDR",
        type=_given,
        help="the Ray cluster to go on in (default: RAY_ADDRESS, else a local Ray). "
        "The address the log records is never joined without this flag",
    )
    _add_verbose(resume, None, "default: as the experiment ran")
    resume.set_defaults(handler=resume_command)


_DIR_HELP = "the experiment's directory, or its URI in storage (s3://..., file://...)"


def build_parser(exit_codes: str) -> Parser:
    """The `tunecore` command's parser: each command sets `handler`, the
    function that runs it; `exit_codes` is the table `--help` ends with."""
    raw = argparse.RawDescriptionHelpFormatter
    parser = Parser(
        prog="tunecore",
        allow_abbrev=False,
        description="tunecore: run, inspect and steer hyperparameter tuning experiments.",
        epilog=exit_codes,
        formatter_class=raw,
    )

    _add_run(parser)

    _add_resume(parser)

    replay_ = parser.subcommand(
        "replay",
        help="rebuild an experiment from its event log and verify it",
        description="Replay every event of DIR's log through the core, check the result "
        "against the snapshots the live run wrote, and print the status. Exit 3 if they "
        "disagree, 4 if the log is corrupt. DIR may be the experiment's URI in storage "
        "(s3://bucket/runs/exp?endpoint_override=..., file:///dir/exp): what is stored "
        "there is read.",
    )
    replay_.add_argument("dir", metavar="DIR", type=_given, help=_DIR_HELP)
    replay_.add_argument(
        "--truncate",
        action="store_true",
        help="cut a corrupt log at its first damaged record (the records "
        "after it are lost) instead of failing",
    )
    replay_.set_defaults(handler=replay_command)

    status = parser.subcommand(
        "status",
        help="print an experiment's status (read-only; fine while it runs)",
        description="Print the status of the experiment in DIR from its event log, running "
        "or finished. Nothing is written. DIR may be the experiment's URI in storage "
        "(s3://bucket/runs/exp?endpoint_override=..., file:///dir/exp): what is stored "
        "there is read (the running driver ships it within seconds).",
    )
    status.add_argument("dir", metavar="DIR", type=_given, help=_DIR_HELP)
    status.set_defaults(handler=status_command)

    stop = parser.subcommand(
        "stop",
        help="ask a running experiment to stop one trial",
        description="Queue a request for the experiment running in DIR to stop a trial for "
        "good. TRIAL_ID is the trial's id or its name in the status table.",
    )
    stop.add_argument("dir", metavar="DIR", type=_given, help=_DIR_HELP)
    stop.add_argument(
        "trial", metavar="TRIAL_ID", help="the trial's id or its name in the status table"
    )
    stop.set_defaults(handler=stop_command)

    add = parser.subcommand(
        "add",
        help="ask a running experiment to add a trial",
        description="Queue a request for the experiment running in DIR to add a trial with "
        "this config, besides the ones its searcher suggests.",
    )
    add.add_argument("dir", metavar="DIR", type=_given, help=_DIR_HELP)
    add.add_argument(
        "--config",
        required=True,
        metavar="JSON",
        help="the trial's config, a JSON object, e.g. '{\"lr\": 0.01}'",
    )
    add.add_argument("--tag", default="", help="the trial's experiment tag (default: none)")
    add.set_defaults(handler=add_command)

    demo = parser.subcommand("demo", help="play one trial's life through the pure core")
    demo.set_defaults(handler=demo_command)
    simulate = parser.subcommand(
        "simulate",
        help="what-if: a recorded experiment's trials under another scheduler",
        description="Run the trials recorded in the experiment at --from again, over their "
        "recorded learning curves and step times, in virtual time, under the scheduler "
        "given; print what it would have decided and used against the original. A trial "
        "the policy wanted to run past its recorded curve ends there and is named.",
    )
    simulate.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        type=_given,
        required=True,
        help="the recorded experiment",
    )
    simulate.add_argument(
        "--scheduler",
        choices=sorted(SCHEDULERS.choices(what_if=True)),
        required=True,
        help="the scheduler the trials run under in the what-if",
    )
    simulate.add_argument("--metric", type=_given, help="default: the experiment's")
    simulate.add_argument("--mode", choices=["min", "max"], help="default: the experiment's")
    simulate.add_argument(
        "--plot", metavar="FILE", type=_given, help="draw both runs, trial by trial (.png/.html)"
    )
    for option, (kind, meaning) in WHAT_IF_OPTIONS.items():
        simulate.add_argument(
            option_flag(option), dest=option, type=kind, help=what_if_help(option, meaning)
        )
    simulate.set_defaults(handler=simulate_command)

    plot = parser.subcommand(
        "plot",
        help="draw an experiment's learning curves, pauses, stops and rungs",
        description="Draw the learning curves of the experiment in DIR (finished or "
        "running) from its event log: where each trial was paused or stopped, the rung "
        "cutoff it missed under ASHA, and ASHA's rungs; the best trials in colour, named "
        "with their config. A .html file is an interactive page that needs no network. "
        "Needs matplotlib (the plot extra).",
    )
    plot.add_argument("dir", metavar="DIR", type=_given, help=_DIR_HELP)
    plot.add_argument(
        "--out",
        type=_given,
        help="a .png or .html file (default: DIR/curves.png; for a URI, "
        "./NAME-curves.png in the current directory)",
    )
    plot.add_argument("--metric", type=_given, help="default: the experiment's")
    plot.add_argument(
        "--mode",
        choices=["min", "max"],
        help="which way --metric is better, to pick the best trials (default: the experiment's)",
    )
    plot.set_defaults(handler=plot_command)

    dashboard = parser.subcommand(
        "dashboard",
        help="serve a live page of an experiment: trials, curves and why each decision was made",
        description="Serve a read-only web page of the experiment in DIR (or at a URI), "
        "following its event log as it grows: an overview, a sortable trials table, "
        "learning curves, each trial's transitions with the reason its scheduler gave, "
        "parameter plots and what-if runs. Needs no Ray and imports none of your code.",
    )
    dashboard.add_argument("dir", metavar="DIR", type=_given, help=_DIR_HELP)
    dashboard.add_argument(
        "--port", type=_port, default=8265, help="the port to serve on (default: 8265; 0: any free)"
    )
    dashboard.add_argument(
        "--host",
        type=_given,
        default="127.0.0.1",
        help="the address to serve on (default: 127.0.0.1, this machine only; "
        "0.0.0.0 serves every network this machine is on)",
    )
    dashboard.set_defaults(handler=dashboard_command)

    transitions = parser.subcommand(
        "transitions", help="print the trial lifecycle's transition table"
    )
    transitions.add_argument(
        "--dot",
        action="store_true",
        help="print it as a Graphviz digraph (`| dot -Tpng -o lifecycle.png`)",
    )
    transitions.set_defaults(handler=transitions_command)
    return parser


def _port(given: str) -> int:
    """A port number, 0 to 65535."""
    try:
        port = int(given)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{given!r} is not a port number (0 to 65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{given!r} is not a port number (0 to 65535)")
    return port
