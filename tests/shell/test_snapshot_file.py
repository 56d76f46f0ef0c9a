"""A snapshot file is written in pieces that do not copy its state; the
bytes are the file's msgpack encoding all the same."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from tunecore.model.codec import to_msgpack
from tunecore.shell.journal import SnapshotFile, SnapshotStore, file_parts


def snapshot(state: bytes, digest: bytes = bytes(16), sealed: bytes = b"") -> SnapshotFile:
    return SnapshotFile(
        format=1, records=7, digest=digest, state=state, log_bytes=1234, seal=sealed
    )


@pytest.mark.parametrize("size", [0, 1, 255, 256, 65_535, 65_536, 300_000])
def test_the_pieces_are_the_encoding_of_the_file(size: int) -> None:
    file = snapshot(bytes(range(256)) * (size // 256) + bytes(size % 256), sealed=b"s" * 32)
    parts = file_parts(file)
    assert b"".join(parts) == to_msgpack(file)
    assert any(part is file.state for part in parts) or size == 0


def test_a_digest_holding_the_state_marker_is_encoded_whole() -> None:
    marker = b"\xa5state\xc4\x00"
    file = snapshot(b"abc", digest=marker + bytes(8))
    assert file_parts(file) == [to_msgpack(file)]


def test_the_stored_file_is_its_checksum_and_its_encoding(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    state = b"x" * 70_000
    store.write(7, bytes(16), state, log_bytes=1234, sealed=b"s" * 32)
    body = to_msgpack(snapshot(state, sealed=b"s" * 32))
    written = store.path(7).read_bytes()
    assert written == zlib.crc32(body).to_bytes(4, "little") + body
    loaded = store.load(7)
    assert loaded is not None
    assert loaded.state == state
