"""A trial's files on a worker when its experiment is mirrored to a `Store`.

With a URI `storage_path` the driver's experiment directory (its staging
copy) exists only on the driver: a worker on another node must neither read
nor write it. So the host gives each trial a node-local *scratch* trial
directory, and persists through the store what has to outlive the node:

- scratch: `$TUNECORE_SCRATCH` (default `<tempfile.gettempdir()>/tunecore-<uid>`,
  this user's own: 0o700, never a link)
  `/<run>-<stay>/<experiment name>/<trial dirname>`, `<run>` being the
  first 8 characters of the driver run's token and `<stay>` random for
  each time the trial comes to a worker: a failed trial restarted on
  another worker of the same process while the first still cleans up
  never shares its directory. The trainable's context names these
  directories, so `chdir_to_trial_dir`, `log_to_file`,
  `worker_checkpoints/` and `Trainable.logdir` are local; the host deletes
  `<run>-<stay>` when the trial leaves the worker (`close`).
- paths from the driver (`save`, `restore`, `export`) are
  `<driver's experiment dir>/<rel>`: `rel` is the path in the store (the
  same layout as the experiment directory), and `<scratch experiment
  dir>/<rel>` the local place that stands for it.
- a save writes into an empty scratch directory, replaces whatever is
  stored at `rel` (a retried save), uploads with `.tunecore_checkpoint.json`
  last (a reader that finds the marker finds the whole checkpoint), then
  deletes the scratch copy. Only then does the save return, and only a
  returned save becomes `CheckpointSaved` in the event log: the log never
  names a half-uploaded checkpoint. A failure raises, naming the URI, and
  the executor fails the trial (retried under `max_failures`).
- a restore downloads the checkpoint's root (`<trial dirname>/checkpoint_N`
  or `.../exploit_N`, the first two components of `rel`) into the trial's
  `worker_checkpoints/` (tunecore's own directories: a function reporting
  it again is not copied, and a function trainable's reset or stop deletes
  it) and restores from there; the download is deleted by the next restore
  or with the trial's scratch.
- exports are written to scratch and uploaded to the same `rel`;
  `log_to_file` files are fetched from the store when the trial arrives
  (output from earlier runs of the trial is kept, as on a shared disk);
  the host uploads them (`upload_output`) with each checkpoint (the output
  up to a checkpoint survives a lost node, or an actor killed before its
  release), when the trainable fails (before the failure is reported, so
  the restarted trial finds it) and when the trial leaves.
- before each of these writes (and the deletion a save or an export
  starts with), the worker checks that no driver of a later lease
  generation than its own driver's claimed the experiment
  (`TrialContext.lease_generation`, `lease.check_not_taken_over`): a
  driver paused past its lease keeps its workers, and the stale worker's
  save of `checkpoint_000007` deleted and replaced the new driver's. Such
  a write raises `TakenOverError` and stores nothing. On a `file://`
  store a save or an export replaces the directory by renames the new
  driver's take-over makes fail (`mirror.upload_fence`), so a worker
  frozen after its check replaces nothing either. On an object store a
  worker of a take-over's generation g saves the driver's
  `checkpoint_000003` as `checkpoint_000003_g<g>` and returns that path,
  which the log records: no two generations share a stored checkpoint
  (`upload_fence.store_checkpoint`). Outputs (`log_to_file`, artifacts,
  exports) keep Ray's names: on `file://` each file is renamed into
  place the same fenced way; on an object store a take-over's worker
  keeps a copy of each under its generation's name first, and a worker
  that finds a later claim after its writes puts that generation's copy
  back (`mirror.output_fence`). Artifacts never take the name of a file
  tunecore keeps in the trial directory (`result.json`, `checkpoint_*`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import stat
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import PurePath

import msgspec

from tunecore.shell.mirror.claims import TakenOverError
from tunecore.shell.mirror.output_fence import EXPORT_DIR, FencedOutputs, fenced_outputs
from tunecore.shell.mirror.upload_fence import store_checkpoint
from tunecore.shell.storage.own_files import kind_of
from tunecore.shell.storage.store import Store, check_rel, checkpoint_root
from tunecore.shell.trainable.checkpoint_files import META_FILE
from tunecore.shell.trainable.function import SCRATCH_DIR
from tunecore.shell.trainable.worker import TrialContext
from tunecore.shell.trial_files import is_tunecore_entry

logger = logging.getLogger(__name__)

SCRATCH_ENV = "TUNECORE_SCRATCH"
"""The environment variable naming a node's scratch root (read on the node)."""


def scratch_root() -> str:
    """This node's root for trial scratch directories: `$TUNECORE_SCRATCH`,
    else this user's own `<tmp>/tunecore-<uid>` (`_private_dir`)."""
    given = os.environ.get(SCRATCH_ENV)
    if given:
        return os.path.abspath(os.path.expanduser(given))  # the cwd changes (`chdir`)
    user = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    return _private_dir(os.path.join(os.path.abspath(tempfile.gettempdir()), f"tunecore-{user}"))


def _private_dir(path: str) -> str:
    """`path`, made (0o700) if missing, once it is a directory of this
    user's that no one else may write in. The temporary directory is
    shared by every user of the node: one who made a shared `tunecore`
    there first (or a link) could rename a worker's directory in it and
    plant a link in its place, and the worker's fresh checkpoint directory
    (deleted, then written) would go through it. `PermissionError` naming
    it otherwise."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    owner = getattr(os, "getuid", lambda: info.st_uid)()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != owner or info.st_mode & 0o022:
        raise PermissionError(
            f"{path}: the scratch root is not this user's own directory ({kind_of(info.st_mode)}"
            f", owner uid {info.st_uid}, mode {stat.S_IMODE(info.st_mode):o}); remove it, or set "
            f"{SCRATCH_ENV} to a directory of your own"
        )
    return path


def _own_entry(name: str) -> bool:
    """Whether a top-level entry of the scratch trial directory is
    persisted some other way than as an artifact, or never by a worker."""
    return name in (EXPORT_DIR, SCRATCH_DIR) or is_tunecore_entry(name)


class MirroredTrial:
    """One trial's scratch directory on this node, and its way to the store
    (see the module doc). Built when the trial is assigned to a worker."""

    def __init__(self, context: TrialContext, store: Store) -> None:
        self._store = store
        self._generation = context.lease_generation
        self._remote = context.experiment_dir
        stay = "-".join(filter(None, (context.storage_token[:8], secrets.token_hex(4))))
        self._own = os.path.join(scratch_root(), stay)
        self.experiment_dir = os.path.join(
            self._own, os.path.basename(os.path.normpath(context.experiment_dir))
        )
        self._trial_rel = self.rel(context.trial_dir)
        self.trial_dir = self._local(self._trial_rel)
        self._logs = [name for name in (context.stdout_file, context.stderr_file) if name]
        self._artifacts = context.sync_artifacts
        self._artifacts_on_checkpoint = context.sync_artifacts_on_checkpoint
        self._uploaded: dict[str, tuple[int, int]] = {}  # artifact -> (size, mtime_ns) stored
        self._download: str | None = None

    def local_context(self, context: TrialContext) -> TrialContext:
        """`context` as the trainable sees it: its directories in scratch."""
        return msgspec.structs.replace(
            context, experiment_dir=self.experiment_dir, trial_dir=self.trial_dir
        )

    def rel(self, path: str) -> str:
        """The store path of `path`, a path inside the driver's experiment
        directory; `ValueError` naming it for any other."""
        inner = _inner_or_none(self._remote, path) if os.path.isabs(path) else None
        if not inner:
            raise ValueError(
                f"{path!r} is not inside the experiment directory {self._remote!r}: "
                "it has no place in the experiment's storage"
            )
        return check_rel("/".join(PurePath(inner).parts), root_ok=False)

    def _local(self, rel: str) -> str:
        return os.path.join(self.experiment_dir, *rel.split("/"))

    # -- the trial's arrival and departure ----------------------------------------------------

    def open(self) -> None:
        """Make the scratch trial directory, with the trial's `log_to_file`
        files as the store has them (absent files are no error)."""
        os.makedirs(self.trial_dir, exist_ok=True)
        for name, rel in self._log_files():
            try:
                data = self._store.read_bytes(rel)
            except FileNotFoundError:
                continue
            path = os.path.join(self.trial_dir, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as file:
                file.write(data)

    def close(self) -> None:
        """Upload the `log_to_file` files (their streams closed by now) and
        delete this stay's scratch. Called as the trial leaves the worker,
        where nobody waits for an error: a failed upload is logged and the
        scratch kept, so the output is still on the node."""
        if self.keep_output():
            shutil.rmtree(self._own, ignore_errors=True)

    def keep_output(self) -> bool:
        """`upload_output`, a failure logged (and False) instead of raised:
        for a trial that leaves or fails, whose caller reports nothing else."""
        try:
            self.upload_output()
        except (OSError, TakenOverError) as error:
            logger.warning(
                "Could not upload the trial's output files: %s; they stay in %s",
                error,
                self.trial_dir,
            )
            return False
        return True

    def upload_output(self, *, checkpoint: bool = False) -> None:
        """Store the `log_to_file` files as they are now (whole files: the
        store has no append; the streams must be flushed first) and, with
        `sync_artifacts`, the trial's other files that changed since they
        were last stored (at a `checkpoint` only if
        `sync_artifacts_on_checkpoint`), fenced (`output_fence`)."""
        with (
            _storing(self._store, self._trial_rel, "upload the trial's output"),
            fenced_outputs(self._store, self._generation, "upload its output") as outputs,
        ):
            for name, rel in self._log_files():
                path = os.path.join(self.trial_dir, name)
                if os.path.isfile(path):
                    with open(path, "rb") as file:
                        outputs.file(rel, file.read())
            if self._artifacts and (self._artifacts_on_checkpoint or not checkpoint):
                self._upload_artifacts(outputs)

    def _upload_artifacts(self, outputs: FencedOutputs) -> None:
        logs = {path for path, _ in self._log_files()}
        for path in _artifacts(self.trial_dir):
            if path in logs:
                continue
            local = os.path.join(self.trial_dir, path)
            stat = os.stat(local)
            signature = (stat.st_size, stat.st_mtime_ns)
            if self._uploaded.get(path) == signature:
                continue
            with open(local, "rb") as file:
                outputs.file(f"{self._trial_rel}/{path}", file.read())
            self._uploaded[path] = signature

    def _log_files(self) -> Iterator[tuple[str, str]]:
        """(local name, store path) of each `log_to_file` file, once each
        (stdout and stderr may share one)."""
        for name in dict.fromkeys(self._logs):
            parts = PurePath(name).parts
            yield os.path.join(*parts), f"{self._trial_rel}/{'/'.join(parts)}"

    # -- operations ---------------------------------------------------------------------------

    def save(self, checkpoint_dir: str, save: Callable[[str], str]) -> str:
        """`save` into scratch, then upload to the store at the place of
        `checkpoint_dir`; returns the path the driver records
        (`checkpoint_dir`, or on an object store its lease generation's
        name for it, plus the sub-path `save` returned if any)."""
        rel = self.rel(checkpoint_dir)
        local = _fresh_dir(self._local(rel))
        try:
            inner = _inner(local, save(local))
            with _storing(self._store, rel, "save the checkpoint"):
                stored = store_checkpoint(
                    self._store,
                    self._generation,
                    local,
                    rel,
                    f"save the checkpoint {rel}",
                    marker=META_FILE,
                )
        finally:
            shutil.rmtree(local, ignore_errors=True)
        if stored != rel:  # the generation's own name (`upload_fence.store_checkpoint`)
            parent = os.path.dirname(os.path.normpath(checkpoint_dir))
            checkpoint_dir = os.path.join(parent, stored.rpartition("/")[2])
        return _joined(checkpoint_dir, inner)

    def restore(self, path: str, restore: Callable[[str], None]) -> None:
        """Download the checkpoint `path` names from the store and `restore`
        from the download."""
        root, inside = checkpoint_root(self.rel(path))
        self._drop_download()
        self._download = download = os.path.join(
            self.trial_dir, SCRATCH_DIR, f"restored_{uuid.uuid4().hex[:8]}"
        )
        try:
            self._store.download_dir(root, download)
        except FileNotFoundError as error:
            raise FileNotFoundError(
                f"the checkpoint {self._store.uri(root)} to restore from is not in storage "
                f"(deleted after it was saved?): {error}"
            ) from error
        except OSError as error:
            raise OSError(f"could not download the checkpoint to restore from: {error}") from error
        restore(_joined(download, inside))

    def export(self, export_dir: str, export: Callable[[str], dict[str, str]]) -> dict[str, str]:
        """`export` into scratch and upload the result to the place of
        `export_dir`; returns each format's path as the driver names it."""
        rel = self.rel(export_dir)
        local = _fresh_dir(self._local(rel))
        doing = f"upload the exports {rel}"
        try:
            written = export(local)
            with (
                _storing(self._store, rel, doing),
                fenced_outputs(self._store, self._generation, doing) as outputs,
            ):
                outputs.directory(local, rel)
        finally:
            shutil.rmtree(local, ignore_errors=True)
        return {name: _driver_path(export_dir, local, path) for name, path in written.items()}

    def _drop_download(self) -> None:
        download, self._download = self._download, None
        if download is not None:
            shutil.rmtree(download, ignore_errors=True)


def _artifacts(trial_dir: str) -> Iterator[str]:
    """The files the trainable wrote in its trial directory, as '/'-joined
    paths, leaving out what tunecore persists its own way (checkpoints,
    exports and their scratch) and what the driver keeps there
    (`result.json`, ...: a trainable's file of that name would replace
    the driver's in storage)."""
    for dirpath, dirnames, filenames in os.walk(trial_dir):
        inner = os.path.relpath(dirpath, trial_dir)
        if inner == ".":
            dirnames[:] = [d for d in dirnames if not _own_entry(d)]
        for name in filenames:
            if inner == "." and _own_entry(name):
                continue
            path = name if inner == "." else f"{inner}/{name}".replace(os.sep, "/")
            if os.path.isfile(os.path.join(dirpath, name)):
                yield path


def _fresh_dir(path: str) -> str:
    """`path` as an empty directory (a retry must not keep stale files)."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def _inner_or_none(directory: str, path: str) -> str | None:
    """`path` relative to `directory` ('' for the directory itself), None
    when it lies outside."""
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(directory))
    if os.path.isabs(relative) or relative.split(os.sep)[0] == os.pardir:
        return None
    return "" if relative == os.curdir else relative


def _inner(directory: str, path: str) -> str:
    inner = _inner_or_none(directory, path)
    if inner is None:
        raise ValueError(
            f"the trainable saved its checkpoint at {path!r}, outside the checkpoint "
            f"directory {directory!r} it was given"
        )
    return inner


def _driver_path(remote: str, local: str, path: str) -> str:
    """`path` (written under `local`) as it is named under `remote`; a path
    elsewhere as it is."""
    inner = _inner_or_none(local, path)
    return path if inner is None else _joined(remote, inner)


def _joined(path: str, inner: str) -> str:
    return os.path.join(path, inner) if inner else path


@contextmanager
def _storing(store: Store, rel: str, what: str) -> Iterator[None]:
    """Say what failed, with the URI, when the store fails."""
    try:
        yield
    except OSError as error:
        raise OSError(f"could not {what} to {store.uri(rel)}: {error}") from error
