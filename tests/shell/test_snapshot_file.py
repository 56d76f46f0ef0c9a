"""A snapshot file is written in pieces that do not copy its state; the
bytes are the file's msgpack encoding all the same."""

from __future__ import annotations

import logging
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


def test_a_link_planted_at_the_temporary_name_is_not_written_through(tmp_path: Path) -> None:
    """The temporary file a snapshot is written to had a name anyone could
    predict (`snapshot_<records>.tmp`), opened following links: a link
    planted there had the driver overwrite the file it points to."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    store = SnapshotStore(tmp_path / "exp")
    store.directory.mkdir(parents=True)
    store.path(7).with_suffix(".tmp").symlink_to(victim)

    store.write(7, bytes(16), b"state", log_bytes=1234)

    assert victim.read_text() == "keep"
    loaded = store.load(7)
    assert loaded is not None
    assert loaded.state == b"state"


def test_a_snapshot_directory_linked_elsewhere_is_neither_written_nor_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A snapshot only saves time: one that would go through a link to
    another directory is left out, with a warning naming the link, and the
    directory linked to is untouched (moving stale snapshots aside, or
    dropping old ones, would change it too)."""
    theirs = tmp_path / "theirs"
    SnapshotStore(theirs).write(3, bytes(16), b"theirs", log_bytes=10)
    kept = {path.name: path.read_bytes() for path in (theirs / "snapshots").iterdir()}
    store = SnapshotStore(tmp_path / "exp")
    (tmp_path / "exp").mkdir()
    store.directory.symlink_to(theirs / "snapshots", target_is_directory=True)

    with caplog.at_level(logging.WARNING):
        store.write(7, bytes(16), b"state", log_bytes=1234)
        assert store.available() == []

    assert {path.name: path.read_bytes() for path in (theirs / "snapshots").iterdir()} == kept
    assert f"{store.directory}: a symbolic link" in caplog.text
