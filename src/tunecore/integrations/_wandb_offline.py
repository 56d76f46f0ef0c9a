"""What W&B holds of an offline run: the history its earlier offline
directories recorded.

W&B cannot resume a run offline: each process that opens run `id` in
offline mode writes a directory of its own, `wandb/offline-run-<time>-<id>`,
and `wandb sync` uploads a run's directories one after the other, in the
order they were made. What each holds is its transaction log,
`run-<id>.wandb`: W&B's records (`wandb.proto.wandb_internal_pb2.Record`,
the schema `wandb sync` reads) in LevelDB's log format (32 KiB blocks of
chunks, each with a 7-byte header: checksum, length, type). W&B buffers
these records and loses the buffer with a SIGKILLed process, so a killed
directory holds some of its history or none; a chunk the kill cut short
is left out here, as `wandb sync` leaves it out.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:
    from wandb.proto import wandb_internal_pb2
except ImportError as error:  # the module's extra says what to install
    raise ImportError(
        "tunecore.integrations.wandb needs wandb: pip install 'tunecore[wandb]'"
    ) from error

_FILE_HEADER = 7  # ":W&B", a magic number and a version
_BLOCK = 32 * 1024
_CHUNK_HEADER = struct.Struct("<IHB")  # checksum, length, type
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


def offline_dirs(wandb_dir: Path, run_id: str) -> list[Path]:
    """The offline directories of run `run_id` under `wandb_dir` (W&B's
    `wandb/` directory), oldest first (their names start with the time)."""
    if not wandb_dir.is_dir():
        return []
    return sorted(wandb_dir.glob(f"offline-run-*-{run_id}"))


def history(run_dir: Path) -> Iterator[dict[str, Any]]:
    """Each row `run.log` recorded in an offline run directory, in order:
    its top-level keys and their values."""
    for path in run_dir.glob("run-*.wandb"):
        for payload in _records(path.read_bytes()):
            # The module re-exports the generated code for the installed
            # protobuf with `import *`, which mypy does not follow.
            record = wandb_internal_pb2.Record()  # type: ignore[attr-defined]
            try:
                record.ParseFromString(payload)
            except Exception:  # protobuf's DecodeError: a record a kill cut
                continue
            if record.WhichOneof("record_type") == "history":
                yield {
                    item.key or "/".join(item.nested_key): json.loads(item.value_json)
                    for item in record.history.item
                    if item.value_json
                }


def _records(data: bytes) -> Iterator[bytes]:
    """The whole records of a LevelDB-format log (module docstring)."""
    position = _FILE_HEADER
    pending = b""
    while position + _CHUNK_HEADER.size <= len(data):
        left_in_block = _BLOCK - position % _BLOCK
        if left_in_block < _CHUNK_HEADER.size:
            position += left_in_block  # a block's tail too short for a header
            continue
        _, length, kind = _CHUNK_HEADER.unpack_from(data, position)
        start = position + _CHUNK_HEADER.size
        chunk = data[start : start + length]
        if kind == 0 or len(chunk) < length:
            return  # zero padding, or a chunk the kill cut short
        position = start + length
        if kind == _FULL:
            yield chunk
        elif kind == _FIRST:
            pending = chunk
        elif kind == _MIDDLE:
            pending += chunk
        elif kind == _LAST:
            yield pending + chunk
            pending = b""
