"""Telling a worker whose experiment directory is not the driver's.

On a cluster, a plain `storage_path` works only if every node mounts the
same filesystem at that path. A node that does not still has the path, or
makes it: its trials would write their checkpoints and output to its own
disk, and the driver would find empty directories, with nothing said.

So each driver run writes a fresh random token into the experiment
directory (`TOKEN_FILE`), and every worker reads it back before it takes a
trial. A missing file or another token means this node sees another
directory under the same name (a stale copy from an earlier run passes no
better than none): the trial fails at once, naming the node and the
directory. A token, not a fixed marker file, because a marker left on a
node's own disk by an earlier run would pass.
"""

from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path

from tunecore.shell.storage.own_files import NotRegularFileError, read_text, write_atomic

TOKEN_FILE = ".tunecore_storage"
_TOKEN_LIMIT = 256


class StorageNotSharedError(OSError):
    """This node does not see the driver's experiment directory."""


def claim(experiment_dir: Path) -> str:
    """Write a fresh token into `experiment_dir` (atomically) and return it."""
    token = secrets.token_hex(16)
    write_atomic(Path(experiment_dir) / TOKEN_FILE, token + "\n")
    return token


def check(experiment_dir: str, token: str) -> None:
    """Raise `StorageNotSharedError` unless `experiment_dir` holds `token`."""
    path = Path(experiment_dir) / TOKEN_FILE
    try:
        found = read_text(path, limit=_TOKEN_LIMIT).strip()
    except FileNotFoundError:
        found = None
    except NotRegularFileError as error:
        raise StorageNotSharedError(f"{path} on node {socket.gethostname()}: {error}") from None
    if found == token:
        return
    why = (
        "does not exist here"
        if not os.path.isdir(experiment_dir)
        else "is not the one the driver writes to (its token differs)"
    )
    raise StorageNotSharedError(
        f"The experiment directory {experiment_dir} {why} on node {socket.gethostname()}: "
        "this node does not share the driver's storage_path. On a cluster, give storage_path "
        "a URI every node reaches (s3://, gs://, or file:// on a mount every node has), or a "
        "path every node mounts at the same place."
    )
