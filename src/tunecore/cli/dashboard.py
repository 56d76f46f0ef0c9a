"""`tunecore dashboard DIR|URI`: serve the experiment's live page until
interrupted."""

from __future__ import annotations

import argparse
import errno
import socket

from tunecore.api.dashboard import Dashboard, Follower
from tunecore.cli.common import as_given, experiment_dir, is_uri, log_error
from tunecore.cli.errors import EXIT_OK, CliError
from tunecore.shell.eventlog import LogError


def dashboard_command(args: argparse.Namespace) -> int:
    location = args.dir if is_uri(args.dir) else str(experiment_dir(args.dir))
    try:
        follower = Follower(location)
    except LogError as error:
        raise log_error(error) from error
    except (OSError, ValueError, ImportError) as error:
        raise CliError(as_given(error, args.dir, "")) from error
    try:
        dashboard = Dashboard(follower, host=args.host, port=args.port)
    except OSError as error:
        raise _cannot_serve(args, error) from error
    print(f"Serving {args.dir} at {dashboard.url} (Ctrl-C to stop)", flush=True)
    try:
        dashboard.serve_forever()
    except KeyboardInterrupt:
        print("Stopped.")
    return EXIT_OK


def _cannot_serve(args: argparse.Namespace, error: OSError) -> CliError:
    """Why the page cannot be served, naming the flag at fault: the host
    when it resolves to nothing or is no address of this machine, else
    the port (taken, or privileged)."""
    if isinstance(error, socket.gaierror) or error.errno == errno.EADDRNOTAVAIL:
        return CliError(f"--host {args.host}: cannot serve on it: {error.strerror}")
    return CliError(f"--port {args.port}: cannot serve on {args.host}: {error.strerror}")
