"""The `tunecore` command line.

    tunecore run MODULE:FUNCTION --param-space FILE [options]   start an experiment
    tunecore resume DIR --trainable MODULE:FUNCTION [--address ADDR]   continue one
    tunecore replay DIR [--truncate]    rebuild it from its event log, verified
    tunecore status DIR                 its status table, read-only
    tunecore stop DIR TRIAL_ID          ask the running experiment to stop a trial
    tunecore add DIR --config JSON      ask the running experiment to add a trial
    tunecore demo                       one trial's life through the pure core
    tunecore simulate --from DIR --scheduler asha [--reduction-factor 4 ...]
                                        what-if: its trials under another scheduler
    tunecore plot DIR [--out FILE]      its learning curves, pauses, stops and rungs
    tunecore dashboard DIR [--port N]   a live page of it: trials, curves, decisions
    tunecore transitions [--dot]        the trial lifecycle's transition table (or its graph)

`run` and `resume` go through `Tuner` and `Tuner.restore`; `replay` and
`status` read the event log (`tunecore.shell.replay`) and print it with the
live run's renderer (`tunecore.shell.progress`); `stop` and `add` post to
the experiment's inbox (`tunecore.shell.inbox`), which the running loop reads
within about a second and logs like any other event. `status` and `replay`
also take an experiment's URI (`s3://bucket/runs/exp?endpoint_override=...`):
they read a local copy of what is stored there (`tunecore.shell.mirror.remote`).

This module holds `main`. The commands are in `run` (run, resume), `log`
(replay, status, simulate, plot), `requests` (stop, add) and `demo` (demo,
transitions); their arguments in `parser`, the flag of each setting of
the Python API in `flags`, the refusal of arguments that are not UTF-8 in
`undecodable`, what the commands share in `common`, the
parameter-space file in `space` and the exit codes in `errors`.

Exit codes:
    0    done: the experiment finished with no errored trial, or the command succeeded
    1    run/resume: the experiment ended with an error or with errored trials
    2    usage or input error (bad arguments or parameter space, a missing or
         foreign directory, an unknown trial)
    3    replay: the replayed run disagrees with the log's snapshots
    4    the event log is corrupt (`tunecore replay DIR --truncate` cuts it)
    130  interrupted (Ctrl-C)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from tunecore.api.spelling import spelled_as_flags
from tunecore.cli.common import log_error
from tunecore.cli.errors import EXIT_INTERRUPTED, CliError
from tunecore.cli.flags import CONFIG_FLAGS
from tunecore.cli.parser import build_parser, parse_arguments
from tunecore.cli.undecodable import refuse_undecodable
from tunecore.shell.eventlog import LogError
from tunecore.shell.storage.own_files import NotRegularFileError

EXIT_CODES = "Exit codes:" + (__doc__ or "").partition("Exit codes:")[2]
"""The module docstring's table, for `--help` (`python -OO` drops docstrings)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code (see the module docstring)."""
    parser = build_parser(EXIT_CODES)
    args = parse_arguments(parser, argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        try:
            refuse_undecodable(parser, args)
            with spelled_as_flags(CONFIG_FLAGS):
                return handler(args)
        except LogError as error:
            raise log_error(error) from None
        except NotRegularFileError as error:  # a link or special file, refused: input
            raise CliError(f"{error.filename}: {error.strerror}") from None
    except CliError as error:
        print(f"tunecore {args.command}: error: {error}", file=sys.stderr)
        return error.code
    except KeyboardInterrupt:
        print(f"tunecore {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
