"""`--address HOST:PORT` checked before Ray is asked to join it: Ray 2.60's
`ray.init` retries an address that does not resolve or where nothing
listens for as long as it runs, printing a warning every few seconds, so
a mistyped address would hang the command. Ray's other spellings
(`auto`, `local`, `ray://...`) are left to Ray."""

from __future__ import annotations

import socket

from tunecore.cli.errors import CliError

CONNECT_TIMEOUT_S = 5.0
"""How long the check waits for the head's port to accept a connection."""


def check_address(flag: str, address: str | None) -> None:
    """An error naming `flag` and `address` if `address` is `HOST:PORT` and
    the host does not resolve, the port is no number, or nothing accepts a
    connection there."""
    if address is None or "://" in address or ":" not in address:
        return
    host, _, port_text = address.rpartition(":")
    host = host.strip("[]")  # an IPv6 address in brackets
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise CliError(f"{flag} {address}: {port_text!r} is not a port number (HOST:PORT)")
    try:
        with socket.create_connection((host, int(port_text)), timeout=CONNECT_TIMEOUT_S):
            pass
    except socket.gaierror as error:
        raise CliError(
            f"{flag} {address}: the host {host!r} is unknown ({error.strerror})"
        ) from None
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        raise CliError(
            f"{flag} {address}: no Ray head answers there ({reason}); "
            "is `ray start --head` running on that machine?"
        ) from None
