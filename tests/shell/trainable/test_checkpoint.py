"""Checkpoint directories and their in-memory form: the user's Checkpoint
type, tunecore's metadata and markers, and the tar archives of
save_to_bytes."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from tests.fifo_watchdog import fifo_watchdog
from tunecore.shell.trainable import Checkpoint
from tunecore.shell.trainable.checkpoint_files import (
    META_FILE,
    NULL_MARKER,
    TEMP_MARKER,
    CheckpointMeta,
    is_null,
    is_temporary,
    make_temporary_dir,
    pack_checkpoint,
    read_meta,
    unpack_checkpoint,
    write_checkpoint,
)


def filled(path: Path) -> Path:
    (path / "sub").mkdir(parents=True)
    (path / "weights.bin").write_bytes(b"\x00\x01")
    (path / "sub" / "notes.txt").write_text("hello")
    return path


def listing(path: Path) -> dict[str, bytes]:
    return {
        str(file.relative_to(path)): file.read_bytes()
        for file in sorted(path.rglob("*"))
        if file.is_file()
    }


def test_from_directory_refuses_a_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="is not an existing directory"):
        Checkpoint.from_directory(tmp_path / "missing")


def test_as_directory_yields_the_checkpoint_itself(tmp_path: Path) -> None:
    checkpoint = Checkpoint.from_directory(filled(tmp_path / "c"))
    with checkpoint.as_directory() as path:
        assert path == checkpoint.path


def test_to_directory_copies(tmp_path: Path) -> None:
    checkpoint = Checkpoint.from_directory(filled(tmp_path / "c"))
    dest = checkpoint.to_directory(tmp_path / "copy")
    assert dest == str(tmp_path / "copy")
    assert listing(Path(dest)) == listing(tmp_path / "c")

    anywhere = Path(checkpoint.to_directory())
    try:
        assert listing(anywhere) == listing(tmp_path / "c")
        assert anywhere != tmp_path / "c"
    finally:
        for file in sorted(anywhere.rglob("*"), reverse=True):
            file.unlink() if file.is_file() else file.rmdir()
        anywhere.rmdir()


def test_to_directory_takes_rays_path_keyword_and_expands_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ray's `Checkpoint.to_directory(path=None)` expands `~` as the docs'
    # `checkpoint.to_directory("~/my_model")` expects.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    checkpoint = Checkpoint.from_directory(filled(tmp_path / "c"))
    dest = checkpoint.to_directory(path="~/copy")
    assert dest == str(tmp_path / "home" / "copy")
    assert listing(Path(dest)) == listing(tmp_path / "c")


def test_metadata_is_stored_with_the_checkpoint_as_ray_stores_it(tmp_path: Path) -> None:
    checkpoint = Checkpoint.from_directory(filled(tmp_path / "c"))
    assert checkpoint.get_metadata() == {}
    checkpoint.set_metadata({"epoch": 3})
    checkpoint.update_metadata({"loss": 0.5})
    assert checkpoint.get_metadata() == {"epoch": 3, "loss": 0.5}
    assert (tmp_path / "c" / ".metadata.json").is_file()  # Ray's file name
    # The same directory by URI (how a stored experiment's checkpoints come).
    assert Checkpoint(f"file://{tmp_path / 'c'}").get_metadata() == {"epoch": 3, "loss": 0.5}
    checkpoint.set_metadata({"epoch": 4})  # replaces
    assert checkpoint.get_metadata() == {"epoch": 4}
    with pytest.raises(TypeError, match="not JSON serializable"):
        checkpoint.set_metadata({"model": object()})


def test_a_saved_checkpoint_keeps_its_metadata(tmp_path: Path) -> None:
    source = filled(tmp_path / "reported")
    Checkpoint.from_directory(source).set_metadata({"epoch": 3})
    write_checkpoint(str(tmp_path / "saved"), str(source), CheckpointMeta())
    assert Checkpoint.from_directory(tmp_path / "saved").get_metadata() == {"epoch": 3}


def test_write_checkpoint_copies_all_but_tunecores_own_files(tmp_path: Path) -> None:
    source = filled(tmp_path / "source")
    (source / TEMP_MARKER).touch()
    (source / META_FILE).write_text("{}")
    dest = tmp_path / "dest"
    meta = CheckpointMeta(training_iteration=7, time_total_s=1.5)

    write_checkpoint(str(dest), str(source), meta)

    assert listing(dest) == {
        **{k: v for k, v in listing(source).items() if k not in (TEMP_MARKER, META_FILE)},
        META_FILE: (dest / META_FILE).read_bytes(),
    }
    assert read_meta(str(dest)) == meta
    assert not is_temporary(str(dest))


def test_a_linked_write_shares_the_files_and_never_writes_through_one(tmp_path: Path) -> None:
    source = filled(tmp_path / "source")
    dest = tmp_path / "dest"
    (dest / "sub").mkdir(parents=True)
    other = tmp_path / "other.txt"
    other.write_text("someone else's")
    os.link(other, dest / "sub" / "notes.txt")  # a file already there, shared with another

    write_checkpoint(str(dest), str(source), CheckpointMeta(), link=True)

    assert listing(dest) == {**listing(source), META_FILE: (dest / META_FILE).read_bytes()}
    assert os.stat(dest / "weights.bin").st_ino == os.stat(source / "weights.bin").st_ino
    assert (
        os.stat(dest / "sub" / "notes.txt").st_ino == os.stat(source / "sub" / "notes.txt").st_ino
    )
    assert other.read_text() == "someone else's"


def test_a_null_checkpoint_is_the_marker_and_the_metadata(tmp_path: Path) -> None:
    write_checkpoint(str(tmp_path / "n"), None, CheckpointMeta())
    assert sorted(os.listdir(tmp_path / "n")) == sorted([NULL_MARKER, META_FILE])
    assert is_null(str(tmp_path / "n"))


def test_pack_and_unpack_round_trip(tmp_path: Path) -> None:
    source = filled(tmp_path / "source")
    (source / TEMP_MARKER).touch()
    meta = CheckpointMeta(training_iteration=3, saved_as="file", file="weights.bin")

    data = pack_checkpoint(str(source), meta)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:  # uncompressed tar
        assert TEMP_MARKER not in tar.getnames()
    unpack_checkpoint(data, str(tmp_path / "out"))

    write_checkpoint(str(tmp_path / "written"), str(source), meta)
    assert listing(tmp_path / "out") == listing(tmp_path / "written")
    assert read_meta(str(tmp_path / "out")) == meta


def test_a_packed_null_checkpoint_unpacks_as_null(tmp_path: Path) -> None:
    unpack_checkpoint(pack_checkpoint(None, CheckpointMeta()), str(tmp_path / "out"))
    assert is_null(str(tmp_path / "out"))


def test_unpacking_refuses_members_outside_the_destination(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(ValueError, match="not a checkpoint archive"):
        unpack_checkpoint(buffer.getvalue(), str(tmp_path / "out"))
    assert not (tmp_path / "escaped.txt").exists()


def test_malformed_metadata_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / META_FILE).write_text('{"training_iteration": "seven"}')
    with pytest.raises(ValueError, match=r"checkpoint metadata .* is malformed"):
        read_meta(str(tmp_path))
    assert read_meta(str(tmp_path / "elsewhere")) is None


def test_metadata_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO planted as a checkpoint's metadata blocked the restore that
    read it forever. (If it blocks again, the watchdog opens the FIFO's
    other end after 20 s, and the test fails instead of hanging.)"""
    fifo = tmp_path / META_FILE
    os.mkfifo(fifo)
    with (
        fifo_watchdog(fifo) as unblocked,
        pytest.raises(ValueError, match=r"checkpoint metadata .* a FIFO, not a regular file"),
    ):
        read_meta(str(tmp_path))
    assert not unblocked.is_set()


def test_temporary_dirs_are_marked_and_distinct(tmp_path: Path) -> None:
    first, second = make_temporary_dir(str(tmp_path)), make_temporary_dir(str(tmp_path))
    assert first != second
    assert is_temporary(first)
    assert is_temporary(second)
