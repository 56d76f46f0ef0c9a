"""Which trial files of a staging directory were fetched from storage, and
are still as fetched: the shipper never uploads those back.

Why. A resume fetches every trial file into a fresh staging directory
(`stored_state.fetch_state`), the workers' outputs among them
(`log_to_file` files, `sync_artifacts` artifacts, `export/`), which
workers store themselves. The shipper then uploaded every staging file
once, since it could not tell which stored copies were current: the
fetched `stdout` or `notes.txt` went up again, over what the resumed
trial's worker had stored meanwhile, and stayed. A file unchanged since
it was fetched is at best what storage holds already; only one the driver
changed since (an appended `result.json`, a repaired `progress.csv`) needs
shipping. So the fetch records each file's signature in the staging
directory (`.tunecore_fetched.json`, hidden: never shipped), and the
shipper counts a file whose signature is the recorded one as uploaded.
The record stays with the staging directory, so a later resume on the
same machine that keeps it knows too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import msgspec

from tunecore.shell.storage.own_files import read_bytes, write_atomic

logger = logging.getLogger(__name__)

RECORD_FILE = ".tunecore_fetched.json"

Signature = tuple[int, int, int]
"""A local file's (size, mtime_ns, inode): it changed if this did."""

_MAX_RECORD_BYTES = 256 << 20


def file_signature(path: Path) -> Signature | None:
    """`path`'s signature (of the entry itself, never through a link);
    None if it is gone."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


def record_fetched(local_dir: Path, rels: Iterable[str]) -> None:
    """Record the files `rels` ('/'-joined, under `local_dir`) as fetched,
    with their signatures now."""
    found = {rel: file_signature(local_dir.joinpath(*rel.split("/"))) for rel in rels}
    record = {rel: sig for rel, sig in found.items() if sig is not None}
    write_atomic(local_dir / RECORD_FILE, msgspec.json.encode(record))


def fetched_signatures(local_dir: Path) -> dict[str, Signature]:
    """The signatures `record_fetched` recorded in `local_dir` ({} if none,
    or a record that does not decode: then every file is shipped, as
    before there was one, with a warning)."""
    path = local_dir / RECORD_FILE
    try:
        data = read_bytes(path, _MAX_RECORD_BYTES, beneath=local_dir)
    except FileNotFoundError:
        return {}
    except OSError as error:
        logger.warning("%s: not read (%s); every trial file is shipped again", path, error)
        return {}
    try:
        return msgspec.json.decode(data, type=dict[str, tuple[int, int, int]])
    except msgspec.DecodeError as error:
        logger.warning("%s: not a record (%s); every trial file is shipped again", path, error)
        return {}
