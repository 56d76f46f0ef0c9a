"""The `Store` contract (`shell/storage/store.py`), one suite over every kind of
store: a local directory, pyarrow's local filesystem, and S3 (a moto server
on 127.0.0.1); how `resolve_storage` reads `storage_path` and
`storage_filesystem`; and what the store's callers read from the contract
alone (a trial's `get_storage()`, a stored checkpoint), for every kind."""

from __future__ import annotations

import datetime
import os
import pickle
import posixpath
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pyarrow.fs import FileType, LocalFileSystem

from tests.storage_fixtures import StorageTarget
from tunecore.shell.mirror.remote import StoredExperiment
from tunecore.shell.storage.arrow_store import ArrowStore
from tunecore.shell.storage.local_store import LocalStore
from tunecore.shell.storage.own_files import is_temp, temp_name
from tunecore.shell.storage.resolve import resolve_storage, within
from tunecore.shell.storage.store import StorageSpec, Store
from tunecore.shell.trainable.trial_storage import TrialStorage

MARKER = ".tunecore_checkpoint.json"


@pytest.fixture(params=["local", "arrow_local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "local":
        return LocalStore(str(tmp_path / "root"))
    if request.param == "arrow_local":
        (tmp_path / "root").mkdir()
        return ArrowStore(LocalFileSystem(), str(tmp_path / "root"))
    target: StorageTarget = request.getfixturevalue("s3_store")
    return target.store


def make_tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


# Bytes that look compressed: pyarrow would transparently decompress a
# `.gz` on read unless told not to, which changed what a checkpoint held.
GZIP_LOOKALIKE = b"\x1f\x8b\x08\x00" + bytes(range(256)) * 3
TREE = {
    MARKER: b'{"training_iteration": 3}',
    "model.gz": GZIP_LOOKALIKE,
    "weights/layer_1.bin": b"\x00" * 1000,
    "weights/deeper/notes.txt": b"hello",
}


# ---------------------------------------------------------------- objects


def test_write_then_read_returns_the_same_bytes_and_creates_parents(store: Store) -> None:
    store.write_bytes("exp/trial_1/params.json", b'{"lr": 0.1}')
    store.write_bytes("exp/events/seg.gz", GZIP_LOOKALIKE)

    assert store.read_bytes("exp/trial_1/params.json") == b'{"lr": 0.1}'
    assert store.read_bytes("exp/events/seg.gz") == GZIP_LOOKALIKE


def test_write_replaces_the_whole_object_and_leaves_no_temporary_name(store: Store) -> None:
    store.write_bytes("exp/result.json", b"a much longer first version")
    store.write_bytes("exp/result.json", b"short")

    assert store.read_bytes("exp/result.json") == b"short"
    assert store.list("exp") == ["result.json"]


def test_a_write_cut_short_leaves_a_temporary_no_listing_shows(
    store: Store, tmp_path: Path
) -> None:
    """The temporary a crashed writer leaves (`own_files.temp_name`, the one
    name every store and `write_atomic` use) is hidden from listings, and
    a directory holding one uploads without it."""
    store.write_bytes("exp/result.json", b"{}")
    left = temp_name("exp/result.json")
    assert is_temp(left.rpartition("/")[2])
    store.write_bytes(left, b"half")
    assert store.list("exp") == ["result.json"]
    local = tmp_path / "trial"
    local.mkdir()
    (local / "params.json").write_bytes(b"{}")
    (local / temp_name("params.json")).write_bytes(b"half")
    store.upload_dir(str(local), "up")
    assert store.list("up") == ["params.json"]


def test_reading_a_missing_object_or_a_directory_is_file_not_found_naming_the_uri(
    store: Store,
) -> None:
    store.write_bytes("exp/trial_1/params.json", b"{}")

    with pytest.raises(FileNotFoundError, match="exp/trial_1/nothing"):
        store.read_bytes("exp/trial_1/nothing")
    with pytest.raises(FileNotFoundError) as info:
        store.read_bytes("exp/trial_1")
    assert store.uri("exp/trial_1") in str(info.value)


def test_list_names_what_is_directly_under_a_directory(store: Store) -> None:
    store.write_bytes("exp/b/params.json", b"{}")
    store.write_bytes("exp/a.txt", b"")
    store.write_bytes("exp/c/d/e.txt", b"x")

    assert store.list("exp") == ["a.txt", "b", "c"]
    assert store.list("exp/c") == ["d"]
    assert "exp" in store.list()
    assert store.list("exp/missing") == []
    assert store.list("exp/a.txt") == []


def test_exists_for_objects_and_directories(store: Store) -> None:
    store.write_bytes("exp/t/params.json", b"{}")

    assert store.exists("exp/t/params.json")
    assert store.exists("exp/t")
    assert not store.exists("exp/t/params")
    assert not store.exists("exp/other")


def test_delete_file_is_idempotent(store: Store) -> None:
    store.write_bytes("exp/events/seg_1", b"1")
    store.write_bytes("exp/events/seg_2", b"2")

    store.delete_file("exp/events/seg_1")
    store.delete_file("exp/events/seg_1")

    assert store.list("exp/events") == ["seg_2"]


# ------------------------------------------------------------------- trees


def test_upload_then_download_keeps_every_file_byte_for_byte(store: Store, tmp_path: Path) -> None:
    source = make_tree(tmp_path / "src", TREE)

    uploaded = store.upload_dir(str(source), "exp/t/checkpoint_000003", marker=MARKER)
    downloaded = store.download_dir("exp/t/checkpoint_000003", str(tmp_path / "back"))

    total = sum(len(data) for data in TREE.values())
    assert uploaded == downloaded == total
    for name, data in TREE.items():
        assert (tmp_path / "back" / name).read_bytes() == data
        assert store.read_bytes(f"exp/t/checkpoint_000003/{name}") == data
    assert store.list("exp/t/checkpoint_000003") == sorted([MARKER, "model.gz", "weights"])


def test_an_upload_cut_short_leaves_no_marker(store: Store, tmp_path: Path) -> None:
    """The marker sorts first by name, so only the marker-last rule keeps it
    out of a tree whose upload failed half way."""
    source = make_tree(tmp_path / "src", {MARKER: b"{}", "a.bin": b"a"})
    # A file that cannot be read: reading /proc/self/mem at offset 0 fails.
    (source / "b.bin").symlink_to("/proc/self/mem")

    with pytest.raises(OSError, match="checkpoint_000001"):
        store.upload_dir(str(source), "exp/t/checkpoint_000001", marker=MARKER)

    assert not store.exists(f"exp/t/checkpoint_000001/{MARKER}")
    assert store.read_bytes("exp/t/checkpoint_000001/a.bin") == b"a"


def test_upload_of_a_missing_directory_is_file_not_found(store: Store, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        store.upload_dir(str(tmp_path / "nothing"), "exp/t/checkpoint_000001")


def test_download_of_nothing_is_file_not_found_naming_the_uri(store: Store, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        store.download_dir("exp/t/checkpoint_000009", str(tmp_path / "dest"))
    assert store.uri("exp/t/checkpoint_000009") in str(info.value)


def test_copy_dir_copies_the_tree_inside_the_store(store: Store, tmp_path: Path) -> None:
    store.upload_dir(str(make_tree(tmp_path / "src", TREE)), "exp/t1/checkpoint_000002")

    store.copy_dir("exp/t1/checkpoint_000002", "exp/t2/exploit_000001", marker=MARKER)

    store.download_dir("exp/t2/exploit_000001", str(tmp_path / "copy"))
    for name, data in TREE.items():
        assert (tmp_path / "copy" / name).read_bytes() == data
    with pytest.raises(FileNotFoundError):
        store.copy_dir("exp/t1/checkpoint_000404", "exp/t2/exploit_000002")


def test_copy_file_copies_one_object_over_what_is_there(store: Store) -> None:
    store.write_bytes("exp/.kept/t1/out.txt", b"kept")
    store.write_bytes("exp/t1/out.txt", b"stale")

    store.copy_file("exp/.kept/t1/out.txt", "exp/t1/out.txt")
    store.copy_file("exp/.kept/t1/out.txt", "exp/t2/sub/out.txt")  # parents made

    assert store.read_bytes("exp/t1/out.txt") == b"kept"
    assert store.read_bytes("exp/t2/sub/out.txt") == b"kept"
    assert store.list("exp/t1") == ["out.txt"]  # no temporary left
    with pytest.raises(FileNotFoundError, match=r"missing\.txt"):
        store.copy_file("exp/.kept/t1/missing.txt", "exp/t1/out.txt")
    with pytest.raises(FileNotFoundError):
        store.copy_file("exp/.kept/t1", "exp/t1/out.txt")  # a directory is no object
    with pytest.raises(ValueError, match="store path"):
        store.copy_file("exp/.kept/t1/out.txt", "exp/../out.txt")
    assert store.read_bytes("exp/t1/out.txt") == b"kept"


def test_delete_dir_removes_only_that_tree_and_is_idempotent(store: Store, tmp_path: Path) -> None:
    source = str(make_tree(tmp_path / "src", {"x.bin": b"x", "sub/y.bin": b"y"}))
    store.upload_dir(source, "exp/t/checkpoint_1")
    # A sibling whose name starts with the deleted one's (an S3 prefix trap).
    store.upload_dir(source, "exp/t/checkpoint_10")

    store.delete_dir("exp/t/checkpoint_1")
    store.delete_dir("exp/t/checkpoint_1")

    assert not store.exists("exp/t/checkpoint_1")
    assert store.list("exp/t") == ["checkpoint_10"]
    assert store.read_bytes("exp/t/checkpoint_10/sub/y.bin") == b"y"


# --------------------------------------------------------- paths, pickling


@pytest.mark.parametrize("rel", ["/abs", "../up", "a/../b", "a//b", "a/", "./a", "a\0b"])
def test_a_path_that_is_not_relative_and_clean_is_refused(store: Store, rel: str) -> None:
    with pytest.raises(ValueError, match="store path"):
        store.write_bytes(rel, b"x")
    with pytest.raises(ValueError, match="store path"):
        store.list(rel)


def test_the_root_is_never_an_object_nor_deleted(store: Store) -> None:
    store.write_bytes("exp/a", b"a")

    with pytest.raises(ValueError, match="store path"):
        store.read_bytes("")
    with pytest.raises(ValueError, match="store path"):
        store.delete_dir("")
    assert store.read_bytes("exp/a") == b"a"


def test_a_store_survives_pickling_as_ray_ships_it_to_workers(store: Store) -> None:
    store.write_bytes("exp/a", b"a")

    copy: Store = pickle.loads(pickle.dumps(store))

    assert copy.read_bytes("exp/a") == b"a"
    assert copy.uri("exp/a") == store.uri("exp/a")


def test_only_a_local_directory_has_local_paths(store: Store) -> None:
    store.write_bytes("exp/a", b"a")

    path = store.local_path("exp/a")

    if isinstance(store, LocalStore):
        assert path is not None
        assert Path(path).read_bytes() == b"a"
    else:
        assert path is None


# --------------------------------------------------------- resolve_storage


def test_no_storage_path_is_the_default_local_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    spec, store = resolve_storage(None)

    assert spec == StorageSpec(uri=str(tmp_path / "tunecore_results"), mirrored=False)
    assert store.local_path("") == str(tmp_path / "tunecore_results")


@pytest.mark.parametrize("as_path", [str, Path])
def test_a_plain_path_is_a_local_unmirrored_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, as_path: type[str] | type[Path]
) -> None:
    monkeypatch.chdir(tmp_path)

    spec, store = resolve_storage(as_path("results"))

    assert spec == StorageSpec(uri=str(tmp_path / "results"), mirrored=False)
    store.write_bytes("exp/a", b"a")
    assert (tmp_path / "results" / "exp" / "a").read_bytes() == b"a"


def test_a_file_uri_is_a_mirrored_local_directory(tmp_path: Path) -> None:
    spec, store = resolve_storage(f"file://{tmp_path}/elsewhere/")

    assert spec == StorageSpec(uri=f"file://{tmp_path}/elsewhere", mirrored=True)
    store.write_bytes("exp/a", b"a")
    assert (tmp_path / "elsewhere" / "exp" / "a").read_bytes() == b"a"


@pytest.mark.parametrize("given", ["{root}", "file://{root}", "local://{root}", "elsewhere"])
def test_pyarrows_local_filesystem_is_the_local_directory_a_file_uri_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "elsewhere"
    spec, store = resolve_storage(given.format(root=root), LocalFileSystem())

    assert spec == StorageSpec(uri=f"file://{root}", mirrored=True)
    assert isinstance(store, LocalStore)  # never through a link, as file:// storage
    store.write_bytes("exp/a", b"a")
    assert (root / "exp" / "a").read_bytes() == b"a"


@pytest.mark.parametrize("uri", ["file://server/share/x", "file://relative"])
def test_a_file_uri_must_name_a_local_absolute_directory(uri: str) -> None:
    with pytest.raises(ValueError, match=r"storage_path .*file:///"):
        resolve_storage(uri)


def test_an_s3_uri_reaches_the_bucket_and_records_no_credentials(
    s3_store: StorageTarget,
) -> None:
    spec, store = resolve_storage(s3_store.uri.replace("?", "/exp?", 1))

    store.write_bytes("trial_1/params.json", b"{}")

    assert s3_store.store.read_bytes("exp/trial_1/params.json") == b"{}"
    assert spec.mirrored
    assert spec.uri.startswith("s3://test-")
    assert "testing" not in spec.uri


def test_a_filesystem_object_takes_the_path_with_or_without_its_scheme(
    s3_store: StorageTarget,
) -> None:
    bucket = s3_store.store.uri().removeprefix("s3://")
    _, with_scheme = resolve_storage(f"s3://{bucket}/exp", s3_store.filesystem)
    spec, without = resolve_storage(f"{bucket}/exp", s3_store.filesystem)

    with_scheme.write_bytes("a", b"a")

    assert without.read_bytes("a") == b"a"
    assert spec == StorageSpec(uri=f"s3://{bucket}/exp", mirrored=True)


@pytest.mark.parametrize("uri", ["foo://x/y", "Memory://bucket"])
def test_an_unknown_scheme_is_an_error_naming_it_never_a_local_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, uri: str
) -> None:
    monkeypatch.chdir(tmp_path)
    scheme = uri.partition(":")[0]

    with pytest.raises(ValueError, match=f"storage_path '{uri}': unknown scheme '{scheme}'"):
        resolve_storage(uri)

    assert os.listdir(tmp_path) == []


def test_a_uri_with_one_slash_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)

    with pytest.raises(ValueError, match=r"storage_path 's3:/bucket/x'.*'://'"):
        resolve_storage("s3:/bucket/x")

    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("value", ["s3://bucket", {"endpoint": "x"}, LocalStore("/tmp")])
def test_a_storage_filesystem_that_is_no_pyarrow_filesystem_is_named(value: object) -> None:
    with pytest.raises(TypeError, match=f"storage_filesystem .*{type(value).__qualname__}"):
        resolve_storage("bucket/x", value)


@pytest.mark.parametrize("value", [42, b"/tmp/x", ""])
def test_a_storage_path_of_the_wrong_type_is_named(value: object) -> None:
    with pytest.raises(TypeError, match=f"storage_path .*{type(value).__qualname__}"):
        resolve_storage(value)


def test_a_uri_without_pyarrow_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.fs", None)

    with pytest.raises(ImportError, match=r"pip install 'tunecore\[storage\]'"):
        resolve_storage("s3://bucket/x")
    # A local path or file:// still needs nothing.
    assert resolve_storage("file:///tmp/x")[0].mirrored


def test_within_roots_the_store_at_a_directory(store: Store) -> None:
    """What is written through the inner store lands under `rel` of the
    outer one, and the inner store names it with its full URI."""
    inner = within(store, "exp_1")
    inner.write_bytes("t/params.json", b"{}")
    assert store.read_bytes("exp_1/t/params.json") == b"{}"
    assert inner.uri("t") == store.uri("exp_1/t")
    for place in ("shown", "fs_path"):
        assert getattr(inner, place)("t") == getattr(store, place)("exp_1/t"), place
    assert type(inner) is type(store)  # each store roots itself: no caller asks which it is
    with pytest.raises(ValueError, match=r"'\.\./x'"):
        within(store, "../x")
    with pytest.raises(ValueError, match="''"):
        store.under("")


def test_an_s3_uri_writes_small_objects_in_one_put_unless_it_says_otherwise(
    s3_store: StorageTarget,
) -> None:
    """pyarrow's S3 client writes any object as a multipart upload (three
    requests) unless `allow_delayed_open`: tunecore turns it on for URIs
    that do not choose, and never records the option in the URI."""
    spec, store = resolve_storage(s3_store.uri)
    assert isinstance(store, ArrowStore)
    assert fs_option(store, "allow_delayed_open") is True
    assert "allow_delayed_open" not in spec.uri
    store.write_bytes("x/y", b"data")  # and it writes
    assert s3_store.store.read_bytes("x/y") == b"data"
    _, chosen = resolve_storage(f"{s3_store.uri}&allow_delayed_open=false")
    assert isinstance(chosen, ArrowStore)
    assert fs_option(chosen, "allow_delayed_open") is False


def test_a_gcs_uri_bounds_the_clients_retries_unless_it_says_otherwise() -> None:
    """Left to its default, pyarrow's GCS client retries for about 15
    minutes, so `tunecore status gs://...` without network or credentials
    seemed to hang; tunecore bounds it for URIs that do not choose."""
    try:
        from pyarrow.fs import GcsFileSystem  # noqa: F401, PLC0415 - pyarrow's build may lack it
    except ImportError:
        pytest.skip("this pyarrow is built without GCS (pyarrow.fs.GcsFileSystem)")
    for scheme in ("gs", "gcs"):
        spec, store = resolve_storage(f"{scheme}://bucket/exp")
        assert isinstance(store, ArrowStore)
        assert fs_option(store, "retry_time_limit") == datetime.timedelta(seconds=30)
        assert "retry_limit_seconds" not in spec.uri
    _, chosen = resolve_storage("gs://bucket/exp?retry_limit_seconds=5")
    assert isinstance(chosen, ArrowStore)
    assert fs_option(chosen, "retry_time_limit") == datetime.timedelta(seconds=5)


def fs_option(store: ArrowStore, name: str) -> object:
    """An option the store's S3 or GCS filesystem was built with (what pickling it keeps)."""
    reduced = store.fs.__reduce__()
    assert isinstance(reduced, tuple)
    options = reduced[1][0]
    assert isinstance(options, dict)
    return options[name]


# ------------------------------------------------- names storage may hold


def put_raw_object(s3_endpoint: str, target: StorageTarget, key: str, body: bytes) -> None:
    """An object under a key pyarrow would never write (`..` in it), put
    with another S3 client, as anyone with write access to the bucket can."""
    import boto3  # type: ignore[import-untyped]  # noqa: PLC0415 - moto's dependency

    client = boto3.client(
        "s3",
        endpoint_url=f"http://{s3_endpoint}",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    bucket = target.store.uri().removeprefix("s3://")
    client.put_object(Bucket=bucket, Key=key, Body=body)


def test_a_stored_name_with_dot_dot_is_refused_and_nothing_lands_outside(
    s3_endpoint: str, s3_store: StorageTarget, tmp_path: Path
) -> None:
    """S3 keeps `t/checkpoint_1/../../victim` verbatim; pyarrow's client
    would GET `victim` instead and write it above the target directory."""
    store = s3_store.store
    store.write_bytes("victim", b"another object")
    store.write_bytes("exp/t/checkpoint_1/model.bin", b"weights")
    put_raw_object(s3_endpoint, s3_store, "exp/t/checkpoint_1/../../victim", b"x")
    put_raw_object(s3_endpoint, s3_store, "exp/t/checkpoint_1/../../gone/deeper", b"x")
    dest = tmp_path / "work" / "dest"

    with pytest.raises(OSError, match=r"no store path.*nothing read or written"):
        store.download_dir("exp/t/checkpoint_1", str(dest))
    with pytest.raises(OSError, match="no store path"):
        store.copy_dir("exp/t/checkpoint_1", "exp/t/checkpoint_2")

    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == []
    assert not store.exists("exp/t/checkpoint_2")
    assert ".." not in store.list("exp/t/checkpoint_1")
    assert store.list("exp/t/checkpoint_1") == ["model.bin"]


def test_an_object_deleted_while_open_is_file_not_found(store: Store) -> None:
    """S3 sends the GET only when read: a compaction deleting the object
    between the open and the read must read as a missing object (readers
    then list again), not as a storage failure."""
    store.write_bytes("exp/events/seg", b"x" * 100)
    try:
        with store.open_input("exp/events/seg") as source:
            store.delete_file("exp/events/seg")
            source.read(100)
    except FileNotFoundError:
        pass  # the store noticed: the reader lists again
    # Or the local file stayed readable through its open descriptor.
    with pytest.raises(FileNotFoundError):
        store.open_input("exp/events/seg").__enter__()


def test_a_local_store_never_reads_through_a_directory_linked_after_its_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`LocalStore` looks for links on the way to a path, then opens the
    path: a trial directory replaced by a link in between (made
    deterministic here by making the swap as the check returns) had the
    read follow it to someone else's file. The open itself now follows
    no link below the storage root."""
    root = tmp_path / "storage"
    (root / "exp" / "trial").mkdir(parents=True)
    (root / "exp" / "trial" / "result.json").write_text("ours")
    theirs = tmp_path / "someone_else"
    theirs.mkdir()
    (theirs / "result.json").write_text("secret")
    store = LocalStore(str(root))
    checked = LocalStore._path

    def swapped_once_checked(self: LocalStore, rel: str, *, root_ok: bool = True) -> str:
        path = checked(self, rel, root_ok=root_ok)
        trial = root / "exp" / "trial"
        if not trial.is_symlink():
            (trial / "result.json").unlink()
            trial.rmdir()
            trial.symlink_to(theirs, target_is_directory=True)
        return path

    monkeypatch.setattr(LocalStore, "_path", swapped_once_checked)
    with pytest.raises(OSError, match="symbolic link"):
        store.read_bytes("exp/trial/result.json")
    assert (theirs / "result.json").read_text() == "secret"


def _swap_for_a_link_once_checked(
    monkeypatch: pytest.MonkeyPatch, trial: Path, theirs: Path
) -> None:
    """Replace `trial` by a link to `theirs` as `LocalStore._path` returns
    from its check of every component: the race made deterministic."""
    checked = LocalStore._path

    def swapped_once_checked(self: LocalStore, rel: str, *, root_ok: bool = True) -> str:
        path = checked(self, rel, root_ok=root_ok)
        if not trial.is_symlink():
            shutil.rmtree(trial)
            trial.symlink_to(theirs, target_is_directory=True)
        return path

    monkeypatch.setattr(LocalStore, "_path", swapped_once_checked)


@pytest.mark.parametrize("operation", ["write_bytes", "upload_dir", "delete_dir", "delete_file"])
def test_a_trial_directory_swapped_for_a_link_after_the_check_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    """As for reads: the writes and deletions of `LocalStore` looked for
    links, then used the path. A trial directory replaced by a link in
    between had the write land in, or the deletion remove from, the
    directory it points to (someone else's checkpoint deleted, their
    result.json replaced). Each now works in the directory reached
    without following a link, and is refused naming the link."""
    root = tmp_path / "storage"
    trial = root / "exp" / "trial"
    (trial / "checkpoint_000001").mkdir(parents=True)
    theirs = tmp_path / "someone_else"
    (theirs / "checkpoint_000001").mkdir(parents=True)
    (theirs / "checkpoint_000001" / "model.bin").write_text("theirs")
    (theirs / "result.json").write_text("theirs")
    local = tmp_path / "upload"
    local.mkdir()
    (local / "model.bin").write_text("ours")
    store = LocalStore(str(root))
    _swap_for_a_link_once_checked(monkeypatch, trial, theirs)
    acts: dict[str, Callable[[], object]] = {
        "write_bytes": lambda: store.write_bytes("exp/trial/result.json", b"ours"),
        "upload_dir": lambda: store.upload_dir(str(local), "exp/trial/checkpoint_000001"),
        "delete_dir": lambda: store.delete_dir("exp/trial/checkpoint_000001"),
        "delete_file": lambda: store.delete_file("exp/trial/result.json"),
    }
    with pytest.raises(OSError, match="symbolic link"):
        acts[operation]()
    assert (theirs / "result.json").read_text() == "theirs"
    assert (theirs / "checkpoint_000001" / "model.bin").read_text() == "theirs"
    assert sorted(p.name for p in theirs.iterdir()) == ["checkpoint_000001", "result.json"]


@pytest.mark.parametrize(
    "uri", ["s3://", "s3:///x", "s3://b/../x", "s3://b/a/./x", "s3://b/a//x", "gs://b/%2e%2e/x"]
)
def test_a_uri_with_no_bucket_or_an_odd_path_component_is_refused_naming_it(uri: str) -> None:
    """`s3://` failed deep in pyarrow ("Path cannot start with a
    separator") once the driver wrote its lease; `s3://b/../x` made keys
    holding `..`, which other tools resolve to another place."""
    with pytest.raises(ValueError, match=r"storage_path .*(no bucket|component)"):
        resolve_storage(uri)


def test_every_store_shows_a_place_as_ray_does(tmp_path: Path) -> None:
    """`Store.shown`: a local directory's path, the path inside a user's
    filesystem when the storage was named by one, else the URI; a path
    behind a symbolic link is still shown, never refused."""
    local = LocalStore(str(tmp_path / "local"))
    assert local.shown("exp/trial_1") == str(tmp_path / "local" / "exp" / "trial_1")
    (tmp_path / "local").mkdir()
    (tmp_path / "local" / "link").symlink_to(tmp_path, target_is_directory=True)
    assert local.shown("link/x") == local.uri("link/x")
    with pytest.raises(OSError, match="link"):
        local.local_path("link/x")
    assert local.fs_path("link/x") == (tmp_path / "local" / "link" / "x").as_posix()
    base = str(tmp_path / "arrow")
    named_by_uri = ArrowStore(LocalFileSystem(), base, "s3://bucket/arrow")
    assert named_by_uri.shown("exp/t") == "s3://bucket/arrow/exp/t" == named_by_uri.uri("exp/t")
    named_by_path = ArrowStore(LocalFileSystem(), base, "local://x", shown_as_path=True)
    assert named_by_path.shown("exp/t") == f"{base}/exp/t"
    assert named_by_path.shown() == base
    for store in (local, named_by_uri, named_by_path, within(named_by_path, "exp")):
        with pytest.raises(ValueError, match=r"\.\."):
            store.shown("../escape")
    assert within(named_by_path, "exp").shown("t") == f"{base}/exp/t"


def test_every_store_reaches_a_place_through_its_filesystem_at_its_fs_path(store: Store) -> None:
    """`Store.filesystem` and `Store.fs_path`: what Ray's `StorageContext`
    names (`storage_filesystem`, `*_fs_path`) reaches the object the store
    wrote, whatever the store."""
    store.write_bytes("exp/t/result.json", b"{}")
    with store.filesystem().open_input_stream(store.fs_path("exp/t/result.json")) as stream:
        assert stream.read() == b"{}"
    assert store.fs_path("exp/t") == posixpath.join(store.fs_path(), "exp", "t")
    assert within(store, "exp").fs_path("t") == store.fs_path("exp/t")
    with pytest.raises(ValueError, match=r"\.\."):
        store.fs_path("../escape")


def test_a_local_stores_filesystem_without_pyarrow_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.fs", None)
    local = LocalStore(str(tmp_path))
    assert local.fs_path("t") == f"{tmp_path.as_posix()}/t"
    with pytest.raises(ImportError, match=r"tunecore\[storage\]"):
        local.filesystem()


# ---------------------------------------------------------------- callers


def test_a_trials_get_storage_names_where_its_files_are_in_every_store(
    store: Store, tmp_path: Path
) -> None:
    """`TrialStorage.of` reads the experiment's place from the store alone:
    its paths, in its filesystem, lead to the trial's stored files."""
    experiment = within(store, "exp")
    experiment.write_bytes("t_1/result.json", b"{}")
    scratch = tmp_path / "scratch" / "exp"  # the node's copy: the same names
    storage = TrialStorage.of(str(scratch), str(scratch / "t_1"), experiment)
    assert storage.storage_fs_path == store.fs_path()
    assert (storage.experiment_dir_name, storage.trial_dir_name) == ("exp", "t_1")
    result = posixpath.join(storage.trial_fs_path, "result.json")
    assert storage.storage_filesystem.get_file_info(result).type == FileType.File


def test_a_stored_checkpoint_is_read_back_from_every_store(store: Store, tmp_path: Path) -> None:
    """`StoredExperiment.checkpoint` reads the checkpoint's place and
    filesystem from the store alone: a local directory is used in place,
    any other store's checkpoint downloads whole."""
    store.upload_dir(str(make_tree(tmp_path / "made", TREE)), "exp/t/checkpoint_3", marker=MARKER)
    experiment = StoredExperiment(store.uri("exp"), within(store, "exp"), tmp_path / "state")
    checkpoint = experiment.checkpoint("t/checkpoint_3")
    assert checkpoint.local_dir() == store.local_path("exp/t/checkpoint_3")
    got = Path(checkpoint.to_directory(tmp_path / "got"))
    read = {str(p.relative_to(got)): p.read_bytes() for p in got.rglob("*") if p.is_file()}
    assert read == TREE
