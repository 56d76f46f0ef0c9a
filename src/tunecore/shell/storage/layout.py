"""Where an experiment's files live, and how each one is written.

Layout (one directory per experiment, one per trial inside it)::

    <root>/<experiment name>/
        <trial dir>/params.json          the trial's config
        <trial dir>/result.json          one JSON object per line, per result
        <trial dir>/progress.csv         the flattened results as a table
        <trial dir>/error.txt            one entry per failure
        <trial dir>/checkpoint_000042/   a persistent checkpoint

Rules this module lives by:

- Every name that ends up on disk goes through `safe_name`: configs, tags,
  custom names and user `trial_dirname_creator` output are user data, and a
  tag such as `../../etc` or a NUL byte must never reach a path. A name is
  made of `[A-Za-z0-9._=,+-]` only (anything else becomes `_`), never starts
  with a dot, never holds `..`, never ends in a dot, is never empty and is at
  most `MAX_NAME_LENGTH` characters. When it has to be cut, the trial id is
  kept (appended if the cut removed it), so trial directories stay unique.
- A trial's directory is a pure function of its spec, or the name its
  event log records (`TrialState.dirname`, a user `trial_dirname_creator`'s
  name made safe and unique): the same trial gets the same directory on
  every call, in every process, so a resumed experiment appends to the
  files it wrote before.
- Paths that come from state (checkpoint paths to delete) are checked to lie
  inside this experiment's directory before anything is removed.
- Nothing is pickled. Values JSON cannot hold are written as described in
  `to_json_value`.
- result.json, progress.csv and error.txt are opened through
  `tunecore.shell.storage.own_files`: never through a symbolic link, only if they
  are regular files. One that is not is skipped with a warning naming it
  (the event log still records everything); a resume rewrites result.json
  and progress.csv whole, replacing the entry itself.

JSON policy. Ray writes `NaN` and `Infinity` into result.json, which is not
JSON: strict parsers (and `jq`) reject the whole line. tunecore writes only
valid JSON: a non-finite float becomes `null` in result.json and params.json.
progress.csv, which has no types, keeps the value as Python spells it
(`nan`, `inf`, `-inf`, which pandas and `float()` read back), so the
information is still on disk.

CSV policy. The header of progress.csv is the first result's flattened keys
('/'-joined). Later rows are appended under the header the file has, with
empty cells where a row has no value. A key the header lacks is held back
(its cells kept in memory) until the file is rewritten whole (atomically,
via a temporary file) with the union header: the old columns in their
order, the new ones appended. That rewrite waits until the file has at
least twice the rows it had at its previous whole write, so a stream of
results that each bring a new key costs O(log n) rewrites, not one per
result (which made n results cost O(n^2)); a new key in an experiment that
rarely gets one is written at once. `flush_progress` (a trial's end) and
`close` write whatever is held back, so a finished trial's table is
complete; after a crash the resume rewrites a table whose header misses a
key from result.json (`progress_in_line`). Every reader (`csv.DictReader`,
pandas) always sees one consistent table.

Appends go to files kept open (at most 128, least recently used closed
first, so 10 000 trials never exhaust file descriptors), each write handed
to the OS as it is made, and a resumed process appends to the files as they
are. Made with `background=True` (the Tuner's), the storage writes trial
files on one background thread (`shell.storage.file_queue`: in
order, errors logged), so the loop never waits on the file system; the
methods that read or delete in a trial directory first wait for the writes
queued before them, and `close` for all of them. A driver killed meanwhile
loses only what its event log holds, and a resume writes that back. The
class is meant for the shell's one loop thread: only that thread calls it.

Why one module of over 400 lines: `ExperimentStorage` is the one writer of
an experiment's files, and each file's format (JSON lines, the CSV table,
params, errors) sits next to the method that writes it.
"""

from __future__ import annotations

import csv
import errno
import functools
import io
import json
import logging
import math
import os
import re
import shutil
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, suppress
from pathlib import Path

import msgspec

from tunecore.core.checkpoints import checkpoint_dirname, dirname_generation
from tunecore.core.naming import original_tag, trial_name
from tunecore.core.results import flatten
from tunecore.model import CheckpointRef, CheckpointStorage, JsonValue, TrialSpec, TrialState
from tunecore.shell import tfevents
from tunecore.shell.storage.file_queue import FileQueue, Job
from tunecore.shell.storage.own_files import (
    NotRegularFileError,
    open_fd,
    open_text,
    read_bytes,
    read_text,
    unlink,
    write_all,
    write_atomic,
    write_new,
)
from tunecore.shell.storage.store import checkpoint_root
from tunecore.shell.trial_files import ERROR_FILE, PARAMS_FILE, PROGRESS_FILE, RESULT_FILE

logger = logging.getLogger(__name__)

# A progress.csv cell holds whatever a result holds (a string of a few
# hundred KiB is a valid result), but the csv module refuses to read a field
# over 128 KiB by default, so reading the table back (the resume's repair, a
# rewrite for a new key) raised and every resume crashed. The limit is
# process-wide; this only raises it.
csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))

MAX_NAME_LENGTH = 100
"""Longest file or directory name written; well under the 255 bytes most file
systems allow, leaving room for the `checkpoint_000000` and temp-file names
next to it."""


_UNSAFE = re.compile(r"[^A-Za-z0-9._=,+\-]")
_SAFE = re.compile(r"[A-Za-z0-9_=,+\-]+(?:\.[A-Za-z0-9_=,+\-]+)*")
"""A name the rules below leave as it is, but for its length and the
reserved names: safe characters, no dot at either end, no two dots in a
row."""
_DOTS = re.compile(r"\.{2,}")
_WINDOWS_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL"}
    | {f"COM{n}" for n in range(1, 10)}
    | {f"LPT{n}" for n in range(1, 10)}
)


_EXPERIMENT_ENTRIES = re.compile(
    r"events|events\.log(\..*)?|snapshots|inbox|driver\.lock|driver\.lease"
    r"|callback_states\.json|pbt_global\.txt|pbt_policy_.*\.txt",
    re.IGNORECASE,
)
"""The names tunecore gives entries of the experiment directory itself
(the event log and its quarantined pieces, the stored log's `events/`,
`snapshots/`, `inbox/`, the lock and the lease, the callbacks' states,
PBT's policy files; `.tunecore_storage` starts with a dot, which no safe
name does), in any case: a file system may not tell `Inbox` from `inbox`.
A trial directory never takes one (`trial_dirname`), and none is read as
one (`is_experiment_entry`)."""


def is_experiment_entry(name: str) -> bool:
    """Whether `name` is one tunecore gives an entry of the experiment
    directory itself, never a trial directory's (`_EXPERIMENT_ENTRIES`)."""
    return _EXPERIMENT_ENTRIES.fullmatch(name) is not None


def experiment_dirname(name: str) -> str:
    """The directory an experiment called `name` has in its storage root:
    every part of tunecore that makes, finds or lists one names it so."""
    return safe_name(name, fallback="experiment")


def safe_name(raw: str, *, keep: str = "", fallback: str = "trial") -> str:
    """`raw` as a name that is safe as one path component (see the module
    docstring for the rules). `keep` (a trial id) must survive truncation so
    cut names stay unique; `fallback` names what would otherwise be empty."""
    if (
        len(raw) <= MAX_NAME_LENGTH
        and _SAFE.fullmatch(raw)
        and raw.partition(".")[0].upper() not in _WINDOWS_RESERVED
    ):
        return raw  # the usual name (reading 100,000 trials back names each one)
    name = _sanitise(raw)
    kept = _sanitise(keep)
    if not name:
        name = kept or _sanitise(fallback) or "trial"
    if name.split(".")[0].upper() in _WINDOWS_RESERVED:
        name = "_" + name
    if len(name) <= MAX_NAME_LENGTH:
        return name
    # Cut, the trial id last whenever the cut would lose it: two names equal
    # in their first 100 characters stay two names (a '_' in front of a
    # device name once cut the id's last character off).
    suffix = "_" + kept[: MAX_NAME_LENGTH // 2] if kept else ""
    if not suffix or kept in name[:MAX_NAME_LENGTH]:
        return name[:MAX_NAME_LENGTH].rstrip(".")
    return name[: MAX_NAME_LENGTH - len(suffix)] + suffix


def _name_before_ids(raw: str, trial_id: str) -> str:
    """The directory name tunecore before 2026-12-07 made of a
    `trial_dirname_creator`'s `raw`: a name it changed did not end with
    the trial id (`ExperimentStorage.trial_dirname` now adds it)."""
    name = safe_name(raw, keep=trial_id, fallback=trial_id)
    return safe_name("_" + name, keep=trial_id) if is_experiment_entry(name) else name


def _holds_results_of(directory: Path, trial_id: str, *, beneath: Path) -> bool:
    """Whether `directory`'s result.json has a line of the trial `trial_id`
    (two trials may have shared it). Opened as tunecore's own file below
    `beneath` (`open_text`: never through a link or a FIFO), read line by
    line; a file that cannot be read holds nothing of it."""
    try:
        with open_text(directory / RESULT_FILE, beneath=beneath) as file:
            for line in file:
                with suppress(ValueError):
                    row = json.loads(line)
                    if isinstance(row, dict) and row.get("trial_id") == trial_id:
                        return True
    except (OSError, ValueError):  # unreadable, or not UTF-8
        return False
    return False


def _sanitise(raw: str) -> str:
    # NFKD splits accented letters into a base letter and a combining mark,
    # so "é" keeps its "e"; what is left outside the safe set becomes "_".
    # ASCII is its own NFKD and has no combining marks: most names are, and
    # the fold costs a call per character (10 us of each trial's start).
    folded = raw
    if not raw.isascii():
        decomposed = unicodedata.normalize("NFKD", raw)
        folded = "".join(c for c in decomposed if not unicodedata.combining(c))
    name = _UNSAFE.sub("_", folded).strip(".")
    return _DOTS.sub("_", name)


_OWN_JSON = frozenset({str, int, bool, type(None)})


def to_json_value(value: object) -> JsonValue:
    """`value` as plain JSON data, so that writing it can never fail and
    never produce invalid JSON.

    - dicts keep their keys as strings (`str(key)` for other keys; a later
      key that stringifies the same overwrites the earlier one);
    - lists, tuples, sets and frozensets become lists;
    - NaN and +-infinity become `null` (see the module docstring);
    - anything else JSON has no type for (a class, a function, a numpy
      scalar) becomes the string `repr(value)`, which says what it was.
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        # A value of these types is its own JSON value: no call for it (a
        # resume's repair makes a row of each result it puts back).
        return {
            _json_key(k): v if type(v) in _OWN_JSON else to_json_value(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json_value(item) for item in value]
    return repr(value)


def _params_text(config: Mapping[str, object]) -> str:
    return json.dumps(to_json_value(config), indent=2, sort_keys=True, allow_nan=False) + "\n"


@functools.lru_cache(maxsize=1024)
def _file_in(trial_dir: Path, name: str) -> Path:
    """`trial_dir / name`, remembered for the trials running: pathlib's
    join cost more than the rest of handing a result to the writer."""
    return trial_dir / name


# What str.splitlines() ends a line at beyond the ASCII controls msgspec
# escapes (U+0085, U+2028, U+2029, in UTF-8): json.dumps escapes them.
_LINE_BREAKS = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


_Reported = tuple[Mapping[str, JsonValue], tuple[Path, float, bool] | None]
"""A result `append_result` was given, and its TensorBoard file, wall
time and whether the file is new (None: no TensorBoard records)."""


def _each(
    items: list[_Reported],
    write: Callable[[Mapping[str, JsonValue], tuple[Path, float, bool] | None], None],
) -> None:
    """`write` each result in turn; one that fails does not keep the rest
    from being written (the first error is raised after, and the file
    queue logs it)."""
    failed: Exception | None = None
    for result, tensorboard in items:
        try:
            write(result, tensorboard)
        except Exception as error:
            failed = failed or error
    if failed is not None:
        raise failed


def _json_line(result: Mapping[str, JsonValue]) -> bytes:
    """One line of result.json, encoded: always valid JSON (non-finite
    floats as null). msgspec writes it, compact, in a fifth of
    `json.dumps`'s time (a result line is written per result, on a
    CPU-bound driver); a value it cannot encode, or text a line reader
    would split, takes `to_json_value` and `json.dumps`, which write every
    value somehow. Those breaks are multi-byte, so an ASCII line (nearly
    every one) is not searched for them: the search took twice as long as
    the encoding."""
    try:
        line = msgspec.json.encode(result)
    except (TypeError, ValueError, OverflowError):
        line = None
    if line is None or (not line.isascii() and any(mark in line for mark in _LINE_BREAKS)):
        return (json.dumps(to_json_value(result), allow_nan=False) + "\n").encode()
    return line + b"\n"


def _csv_row(result: Mapping[str, JsonValue]) -> dict[str, str]:
    """One progress.csv row: the flattened result's cells. Strings and
    numbers, nearly every cell, are made here as `_csv_cell` makes them,
    without a call per cell (a row is made for every result)."""
    row: dict[str, str] = {}
    for key, value in flatten(result).items():
        kind = type(value)
        if kind is str:
            row[key] = value  # type: ignore[assignment]
        elif kind is float or kind is int or kind is bool:
            row[key] = str(value)
        else:
            row[key] = _csv_cell(value)
    return row


def _json_key(key: object) -> str:
    return key if isinstance(key, str) else str(key)


def _csv_cell(value: JsonValue) -> str:
    """One CSV cell: strings as they are, lists as JSON text, None empty,
    numbers as Python prints them (so NaN stays `nan`)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict):
        return json.dumps(to_json_value(value), allow_nan=False)
    return str(value)


def read_result_rows(
    trial_dir: Path, *, beneath: Path | None = None
) -> list[dict[str, JsonValue]] | None:
    """The results a trial's result.json holds, in the order they were
    reported; a line a crash cut short (not valid JSON, or not an object)
    is left out. None when there is no such file, or (with a warning) when
    it is not a regular file or, below `beneath`, reached through a link
    (`tunecore.shell.storage.own_files`)."""
    path = trial_dir / RESULT_FILE
    try:
        text = read_text(path, beneath=beneath)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except NotRegularFileError as error:
        logger.warning("Ignoring %s: %s", path, error)
        return None
    return parse_result_rows(text)


def parse_result_rows(text: str) -> list[dict[str, JsonValue]]:
    """The rows of result.json's `text` (`read_result_rows`)."""
    rows: list[dict[str, JsonValue]] = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


class NotInExperimentError(ValueError):
    """A trial's directory tunecore would write a checkpoint into is not
    one of this experiment's own (outside it, or a symbolic link: a
    trainable can replace its own directory). Nothing is written there;
    the loop fails that trial and the run goes on."""


class ExperimentStorage:
    """The directory of one experiment and the files in it.

    `root` is taken as given (`~` is expanded; the API decides the default,
    `tunecore.shell.storage.resolve.DEFAULT_ROOT`); `name` is made safe like
    every other name, so the experiment directory is always directly inside `root`.
    """

    def __init__(self, root: str | Path, name: str, *, background: bool = False) -> None:
        self.root = Path(root).expanduser().resolve()
        self.path = self.root / experiment_dirname(name)
        self.path.mkdir(parents=True, exist_ok=True)
        self._tables: dict[Path, _ProgressTable] = {}
        self._dir_owners: dict[str, str] = {}
        self._warned: set[tuple[str, str]] = set()
        self._given_names: dict[str, str] = {}
        # The directory each trial got (by trial id), for calls that only
        # have its spec.
        self._known_dirs: dict[str, Path | str] = {}
        self._links: frozenset[str] | None = None  # `own_trial_dir`
        self._appender = _Appender(beneath=self.path)
        self._files = FileQueue(background=background, settle=self._appender.flush)

    def close(self) -> None:
        """Finish the queued writes, write the progress.csv cells held back,
        then close the result files kept open for appending."""
        self._files.close()
        for path, table in self._tables.items():
            if table.held:
                self._rewrite_csv(path, table)
        self._appender.close()

    def drain(self) -> None:
        """Return once every write queued so far is done (`FileQueue.drain`)."""
        self._files.drain()

    def writes_held(self) -> AbstractContextManager[None]:
        """A block whose queued writes go to the writer together as it ends
        (`FileQueue.held`): the loop's round of events, so the writer works
        while the loop waits for the next one instead of taking turns with
        it at the GIL."""
        return self._files.held()

    @property
    def experiment_dir(self) -> Path:
        """The experiment's directory (`root/<safe name>`)."""
        return self.path

    # -- checkpoint paths in the log -------------------------------------------

    def portable(self, checkpoint: CheckpointRef) -> CheckpointRef:
        """`checkpoint` as the event log records it: a persistent one inside
        the experiment directory by its path relative to it, so the
        directory can be moved (or copied to another machine) and resumed."""
        if checkpoint.storage is not CheckpointStorage.PERSISTENT:
            return checkpoint
        path = Path(checkpoint.path)
        if not path.is_absolute() or not path.is_relative_to(self.path):
            return checkpoint
        return msgspec.structs.replace(checkpoint, path=str(path.relative_to(self.path)))

    def located(self, checkpoint: CheckpointRef) -> CheckpointRef:
        """`checkpoint` with the path workers and users can open (logs written
        before paths were relative hold absolute ones, which stay as they are)."""
        if checkpoint.storage is not CheckpointStorage.PERSISTENT:
            return checkpoint
        return msgspec.structs.replace(checkpoint, path=str(self.path / checkpoint.path))

    # -- trial directories ----------------------------------------------------

    def trial_dirname(self, spec: TrialSpec, dirname: str | None = None) -> str:
        """The safe directory name of a trial: `dirname` (from a user's
        `trial_dirname_creator`) if given; else the one it was last given in
        this process, so code that only has the spec (the file loggers)
        finds the directory the loop chose; else
        `{trial name without id}_{trial id}_{experiment tag}`, with the tag
        the trial was created with (PBT's exploits change the tag, not the
        directory, in this run and after a resume). A name tunecore gives
        an entry of the experiment directory (`_EXPERIMENT_ENTRIES`) gets a
        leading `_`. A name changed on the way (a character replaced, the
        `_`) ends with the trial id, if it does not hold it already: two
        names that differ only where tunecore changed them stay two
        directories."""
        if dirname is None:
            given = self._given_names.get(spec.trial_id)
            if given is not None:
                return given
            base = trial_name(spec, include_trial_id=False)
            dirname = f"{base}_{spec.trial_id}"
            if tag := original_tag(spec.experiment_tag):
                dirname = f"{dirname}_{tag}"
        name = safe_name(dirname, keep=spec.trial_id, fallback=spec.trial_id)
        if is_experiment_entry(name):
            # A user's "inbox" would have put the trial's files in the inbox,
            # "snapshots" or "events" among tunecore's own, "events.log" failed.
            # The '_' may make it too long: cut as any name, keeping the id.
            name = safe_name("_" + name, keep=spec.trial_id)
        if name != dirname and spec.trial_id not in name:
            # A name tunecore changed (a character replaced, a '_' added) keeps
            # the trial id: "a/b" and "a_b", "Café" and "Cafe", "inbox" and
            # "_inbox" from a creator gave two trials one directory, their
            # results and checkpoints mixed. Pure, so a resume finds it again.
            name = safe_name(f"{name}_{spec.trial_id}", keep=spec.trial_id)
        return name

    def trial_dirname_of(
        self, trial: TrialState, dirname_of: Callable[[TrialState], str] | None
    ) -> str:
        """The directory name of `trial`: the one its log recorded
        (`TrialState.dirname`, made safe again: a log is data), else the
        one `dirname_of` (the user's `trial_dirname_creator`, as
        `trial_view.dirname_of` wraps it) gives it (`_named_by_creator`),
        else its default `trial_dirname`. Call `know_recorded` with the
        experiment's trials first, so a creator's name another trial's
        log records is seen as taken."""
        if trial.dirname is not None:
            return self.trial_dirname(trial.spec, trial.dirname)
        if dirname_of is None:
            return self.trial_dirname(trial.spec)
        given = self._given_names.get(trial.trial_id)
        if given is not None:
            return given
        name = self._named_by_creator(trial.spec, dirname_of(trial))
        self._given_names[trial.trial_id] = name
        self._dir_owners.setdefault(name, trial.trial_id)
        return name

    def know_recorded(self, trials: Iterable[TrialState]) -> None:
        """Take the directory names `trials`' log records as theirs, so
        no other trial is given one (`trial_dirname_of`)."""
        for trial in trials:
            if trial.dirname is not None:
                name = self.trial_dirname(trial.spec, trial.dirname)
                self._given_names[trial.trial_id] = name
                self._dir_owners.setdefault(name, trial.trial_id)

    def _named_by_creator(self, spec: TrialSpec, raw: str) -> str:
        """The directory of a trial whose log records none, which a
        `trial_dirname_creator` named `raw`. Its `trial_dirname`, if no
        other trial has that name; else that name ending with the trial
        id (`_<trial id>`, then `_2`, ... should a creator have given that
        too): Ray and tunecore before the name was logged gave two trials
        of one name one directory, their results and checkpoints mixed.

        A trial of a log from before the name was logged keeps the
        directory its files are in, if that one is not the name above:
        the name the creator gives it, shared with another trial as
        before, or the name tunecore before 2026-12-07 made of it (a
        changed name without the id: `a_b` for `a/b`). A directory is the
        trial's if its result.json holds a line of the trial's id
        (`_holds_results_of`); only names that differ are read, so a
        trial costs no read unless its name was taken or changed."""
        name = self.trial_dirname(spec, raw)
        fresh, n = name, 1
        while self._dir_owners.get(fresh, spec.trial_id) != spec.trial_id:
            n += 1
            tail = spec.trial_id if n == 2 else f"{spec.trial_id}_{n - 1}"
            fresh = safe_name(f"{name}_{tail}", keep=tail)
        if (self.path / fresh).is_dir():
            return fresh
        for earlier in dict.fromkeys((name, _name_before_ids(raw, spec.trial_id))):
            if earlier != fresh and _holds_results_of(
                self.path / earlier, spec.trial_id, beneath=self.path
            ):
                return earlier
        return fresh

    def trial_dir(
        self, spec: TrialSpec, dirname: str | None = None, *, at_once: bool = True
    ) -> Path:
        """The trial's directory, created if missing. Stable: it depends on
        the spec and `dirname` only (a user dirname is remembered for later
        calls without one; after a resume the loop passes it again).

        `at_once=False` hands the creation to the file queue, ahead of
        every write submitted after this call (the trial's files), for a
        caller that will not open files in it itself: making a directory
        costs the caller 0.1-0.2 ms on a busy local disk, a round trip on a
        network one. Whatever reads or writes a trial's files here drains
        the queue first; a worker on this host makes the directory too
        before it enters it (`TrialHost.assign`).

        A `dirname` shared by two trials mixes their files. The loop never
        gives one (`trial_dirname_of` makes a creator's repeated name
        unique, and the log keeps the name it made), except to trials of
        a log from before names were logged that shared a directory then:
        such a clash is logged, once per name and trial."""
        if dirname is None:
            remembered = self._known_dirs.get(spec.trial_id)
            if remembered is not None:  # made already: no renaming, no mkdir per result
                return Path(remembered) if isinstance(remembered, str) else remembered
        name = self.trial_dirname(spec, dirname)
        if dirname is not None:
            self._given_names[spec.trial_id] = name
        owner = self._dir_owners.setdefault(name, spec.trial_id)
        if owner != spec.trial_id and (name, spec.trial_id) not in self._warned:
            self._warned.add((name, spec.trial_id))
            logger.warning(
                "Trials %s and %s share the directory name %r; their files will mix. "
                "Make trial_dirname_creator return a unique name per trial.",
                owner,
                spec.trial_id,
                name,
            )
        path = self.own_trial_dir(name)
        if at_once:
            path.mkdir(exist_ok=True)
        else:
            self._files.submit("trial directory", functools.partial(path.mkdir, exist_ok=True))
        self._known_dirs[spec.trial_id] = path
        return path

    def own_trial_dir(self, name: str) -> Path:
        """The path of the trial directory `name` (a `trial_dirname`), once
        it is known not to be a symbolic link: a link in its place (to
        someone else's directory) would have the trial, its files and a
        resume's repair write there, so it raises `NotRegularFileError`
        naming it, before anything is written (a `file://` storage refuses
        it the same way). The links are those the experiment directory held
        when this storage first made or repaired a trial directory: one
        listing, no call per trial."""
        if self._links is None:
            self._links = _links_in(self.path)
        path = self.path / name
        if name in self._links:
            raise NotRegularFileError(
                errno.ELOOP,
                "a symbolic link in place of a trial directory: tunecore never writes "
                "through a link (move the trial's directory back, or remove the link)",
                str(path),
            )
        return path

    def settle_dir(self, trial_id: str) -> None:
        """Keep an ended trial's directory as its string, not a `Path` (the
        loop's `_settle_dir`): it is made, and is asked for seldom now."""
        known = self._known_dirs.get(trial_id)
        if isinstance(known, Path):
            self._known_dirs[trial_id] = os.fspath(known)

    def forget_dirs(self) -> None:
        """Drop what was kept of each trial's directory (its name's owner,
        the directory): the run is over and its results hold the
        directories. These tables, 0.3 KB a trial, lived on with the run's
        objects until the collector's next full collection (issue 41)."""
        self._dir_owners = {}
        self._warned = set()
        self._known_dirs = {}

    # -- files ------------------------------------------------------------------

    def write_params(self, trial_dir: Path, config: Mapping[str, object]) -> Path:
        """Write params.json, with the fallbacks of `to_json_value`: created
        and written at once when the trial has none yet (one directory entry,
        not two), else replaced atomically (a reader never sees half a file,
        a crash leaves the old one). A crash mid-creation can leave it short;
        a resume writes it again (`params_hold`). Formatted on the writer
        thread too: with `indent` the json module encodes in Python, a tenth
        of a millisecond per trial. The config is the trial's spec's, never
        changed in place."""
        path = trial_dir / PARAMS_FILE

        def write() -> None:
            text = _params_text(config)
            if not write_new(path, text.encode(), beneath=self.path):
                write_atomic(path, text, beneath=self.path)

        self._files.submit(PARAMS_FILE, write)
        return path

    def params_hold(self, trial_dir: Path, config: Mapping[str, object]) -> bool:
        """Whether the trial's params.json holds `config` whole (a resume
        rewrites it otherwise: missing, cut short by a crash, or older). A
        file longer than the config's text is not read: it cannot hold it."""
        expected = _params_text(config).encode()
        try:
            held = read_bytes(trial_dir / PARAMS_FILE, limit=len(expected), beneath=self.path)
            return held == expected
        except OSError:
            return False

    def append_result(
        self,
        trial_dir: Path,
        result: Mapping[str, JsonValue],
        *,
        json: bool = True,
        csv: bool = True,
        tensorboard: tuple[Path, float, bool] | None = None,
    ) -> None:
        """Record one result: a line of result.json (`json`: the result as
        it was reported, nested, always valid JSON with non-finite floats as
        null), a row of progress.csv (`csv`: over the flattened result; a
        key the header lacks waits for the next whole rewrite, see the
        module docstring) and its TensorBoard records (`tensorboard`: the
        event file in the trial directory, the wall time, whether the file
        is new; `tfevents.result_records`), through the same open files and
        refusals as the result files. Each file is written, or fails, on
        its own. The results a trial reports one after another in a round
        of the loop join one job per file (`FileQueue.submit_batched`): a
        run-ahead batch of 256 results costs the loop a list append each,
        not three jobs each, and the writer three jobs in all. With a
        background writer a job reads `result` later, on its thread: the
        caller must never change it afterwards (the loop never mutates a
        result)."""
        tensorboard_file = None if tensorboard is None else tensorboard[0]
        self._files.submit_batched(
            (trial_dir, json, csv, tensorboard_file),
            (result, tensorboard),
            lambda items: self._result_jobs(trial_dir, items, json, csv, tensorboard_file),
        )

    def _result_jobs(
        self,
        trial_dir: Path,
        items: list[_Reported],
        json: bool,
        csv: bool,
        tensorboard: Path | None,
    ) -> list[tuple[str, Job]]:
        """One job per file `append_result` was asked for, each writing
        every result in `items` (which may grow until the jobs run, see
        `FileQueue.submit_batched`)."""
        jobs: list[tuple[str, Job]] = []
        appender = self._appender
        if json:
            lines = _file_in(trial_dir, RESULT_FILE)
            jobs.append(
                (
                    RESULT_FILE,
                    lambda: _each(items, lambda r, _: appender.append(lines, _json_line(r))),
                )
            )
        if csv:
            table = _file_in(trial_dir, PROGRESS_FILE)
            jobs.append(
                (PROGRESS_FILE, lambda: _each(items, lambda r, _: self._append_csv(table, r)))
            )
        if tensorboard is not None:
            events = tensorboard

            def records(
                result: Mapping[str, JsonValue], when: tuple[Path, float, bool] | None
            ) -> None:
                assert when is not None  # every item of a TensorBoard batch has its time
                appender.append(events, tfevents.result_records(result, when[1], when[2]))

            jobs.append((events.name, lambda: _each(items, records)))
        return jobs

    def _append_csv(self, path: Path, result: Mapping[str, JsonValue]) -> None:
        row = _csv_row(result)
        try:
            table = self._progress_table(path)
        except FileNotFoundError:  # a new file: header and row, appended alike
            text = _csv_line(list(row)) + _csv_line(list(row.values()))
            self._appender.append(path, text.encode())
            self._tables[path] = _ProgressTable(list(row), rows=1)
            return
        except NotRegularFileError as error:
            self._appender.refuse(path, error)
            return
        if table is None:  # a file with no header (empty, or damaged): written anew
            with open_text(path, "w", beneath=self.path) as file:
                file.write(_csv_line(list(row)) + _csv_line(list(row.values())))
            self._tables[path] = _ProgressTable(list(row), rows=1)
            return
        self._appender.append(path, _csv_line(table.take(row)).encode())
        if table.held and table.appended >= table.rows:
            self._rewrite_csv(path, table)

    def flush_progress(self, trial_dir: Path) -> None:
        """Write the progress.csv cells held back for new keys (a trial's
        end, so a finished trial's table is complete)."""
        path = trial_dir / PROGRESS_FILE
        self._files.submit(PROGRESS_FILE, lambda: self._flush_table(path))

    def _flush_table(self, path: Path) -> None:
        """Write what is held back, then forget the table: 10,000 ended
        trials would keep a kilobyte each (a trial that runs again reads
        the header back from its file)."""
        table = self._tables.get(path)
        if table is not None and table.held:
            self._rewrite_csv(path, table)
        self._tables.pop(path, None)

    def _progress_table(self, path: Path) -> _ProgressTable | None:
        """What is known of progress.csv: cached, or its header read from the
        file (a previous process's: a resumed experiment keeps appending; its
        row count unknown, the first new key rewrites at once). None for a
        file without a header; FileNotFoundError without a file. The file
        is closed first, with what it held written (`_Appender.forget`)."""
        cached = self._tables.get(path)
        if cached is not None:
            return cached
        self._appender.forget(path)
        with open_text(path, beneath=self.path) as file:
            first = next(csv.reader(file), None)
        if not first:
            return None
        table = self._tables[path] = _ProgressTable(first, rows=0)
        return table

    def _rewrite_csv(self, path: Path, table: _ProgressTable) -> None:
        """Rewrite progress.csv whole with the held-back keys in its header
        and their cells in the rows appended since the last whole write."""
        self._appender.forget(path)
        try:
            with open_text(path, beneath=self.path) as file:
                reader = csv.reader(file)
                next(reader, None)
                rows = list(reader)
        except NotRegularFileError as error:
            self._appender.refuse(path, error)
            table.held.clear()
            table.late.clear()
            return
        header = table.header + list(table.held)
        column = {key: i for i, key in enumerate(header)}
        first_appended = len(rows) - table.appended
        for offset, cells in table.late.items():
            if 0 <= first_appended + offset < len(rows):
                line = rows[first_appended + offset]
                line.extend([""] * (len(header) - len(line)))
                for key, cell in cells.items():
                    line[column[key]] = cell
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(header)
        writer.writerows(line + [""] * (len(header) - len(line)) for line in rows)
        write_atomic(path, buffer.getvalue(), beneath=self.path)
        self._tables[path] = _ProgressTable(header, rows=len(rows))

    def read_results(self, trial_dir: Path) -> list[dict[str, JsonValue]]:
        """The results result.json holds, in order (see `read_result_rows`);
        none without the file."""
        self._files.drain()
        return read_result_rows(trial_dir, beneath=self.path) or []

    def progress_in_line(self, trial_dir: Path, rows: Sequence[Mapping[str, JsonValue]]) -> bool:
        """Whether progress.csv holds one row per result in `rows` under a
        header with every key they have (a crash can leave a row short, or
        new keys held back: module docstring)."""
        self._files.drain()
        try:
            with open_text(trial_dir / PROGRESS_FILE, beneath=self.path) as file:
                reader = csv.reader(file)
                header = set(next(reader, None) or ())
                count = sum(1 for _ in reader)
        except FileNotFoundError:
            return not rows
        except NotRegularFileError:
            return False  # rewritten whole (atomically, replacing the entry)
        return count == len(rows) and all(header.issuperset(flatten(row)) for row in rows)

    def rewrite_results(self, trial_dir: Path, rows: Sequence[Mapping[str, JsonValue]]) -> None:
        """Make result.json and progress.csv hold exactly `rows` (a resume
        puts them back in line with the event log). Each file is replaced
        atomically: a crash during the rewrite leaves the old file or the
        new one, never part of either, so the next resume can repair it."""
        self._files.drain()
        cells = [_csv_row(result) for result in rows]
        header = list(dict.fromkeys(key for row in cells for key in row))
        table = io.StringIO()
        if rows:
            writer = csv.DictWriter(table, fieldnames=header, restval="")
            writer.writeheader()
            writer.writerows(cells)
        lines = b"".join(_json_line(r) for r in rows).decode()
        texts = {RESULT_FILE: lines, PROGRESS_FILE: table.getvalue()}
        for name, text in texts.items():
            path = trial_dir / name
            self._appender.forget(path)
            self._tables.pop(path, None)
            if text:
                write_atomic(path, text, beneath=self.path)
            else:
                unlink(path, beneath=self.path)
        if rows:
            self._tables[trial_dir / PROGRESS_FILE] = _ProgressTable(header, rows=len(rows))

    def close_file(self, path: Path) -> None:
        """Release `path`'s open descriptor (its trial has ended)."""
        self._files.submit(path.name, lambda: self._appender.forget(path))

    def append_error(self, trial_dir: Path, entry: str) -> Path:
        """Append one error.txt entry verbatim (`tunecore.core.naming.error_entry`
        formats it; the shell only writes)."""
        path = trial_dir / ERROR_FILE
        self._files.submit(ERROR_FILE, lambda: self._append_error(path, entry))
        return path

    def _append_error(self, path: Path, entry: str) -> None:
        try:
            with open_text(path, "a", beneath=self.path) as file:
                file.write(entry)
        except NotRegularFileError as error:
            self._appender.refuse(path, error)

    # -- checkpoints --------------------------------------------------------------

    def checkpoint_path(
        self, trial_dir: Path, iteration: int, recorded: Iterable[CheckpointRef] = ()
    ) -> Path:
        """Where the checkpoint of `iteration` goes: `checkpoint_{iteration:06d}`
        in `trial_dir`, which must be a trial directory of this experiment
        (`NotInExperimentError`); whatever is at that name is replaced.

        `recorded` are the trial's recorded persistent checkpoints, and a
        recorded checkpoint is never written over, since another trial may
        be reading it (PBT's exploit copies a donor's newest checkpoint while
        the donor trains on). A trial that was restored to an earlier
        iteration (exploited, or back from a failure) saves that iteration
        again into `checkpoint_{iteration:06d}_{n}`, the first `n` from 1
        that no recorded checkpoint holds. On an object store a worker of
        a later lease generation g stores the name given as `<name>_g<g>`
        (`mirror.upload_fence`): a recorded name holds its name without
        that suffix too."""
        given: object = iteration  # callers outside mypy's view may pass anything
        if isinstance(given, bool) or not isinstance(given, int) or given < 0:
            raise ValueError(f"checkpoint iteration must be an int >= 0, got {iteration!r}")
        name = base = checkpoint_dirname(iteration)
        held = self._held_names(Path(trial_dir).name, base, recorded)
        again = 0
        while name in held:
            again += 1
            name = f"{base}_{again}"
        trial = Path(trial_dir)
        if trial.is_symlink():
            raise NotInExperimentError(
                f"trial_dir {str(trial)!r} is a symbolic link (to {os.readlink(trial)!r}), "
                "not a directory of its own: no checkpoint is written through it"
            )
        if not self._inside(trial, min_depth=1):
            raise NotInExperimentError(
                f"trial_dir {str(trial)!r} is not inside the experiment directory "
                f"{str(self.path)!r}"
            )
        # The name itself is this storage's to make: a link the trial planted
        # there is replaced (`checkpoint_dir`), never followed.
        return trial / name

    def checkpoint_dir(
        self, trial_dir: Path, iteration: int, recorded: Iterable[CheckpointRef] = ()
    ) -> Path:
        """An empty `checkpoint_path` directory. A save that finds one there
        (a retry of a save that failed, or one a killed driver never
        recorded) starts from empty, so no stale file of the old save
        survives."""
        path = self.checkpoint_path(trial_dir, iteration, recorded)
        self._files.drain()  # nothing queued may write into it meanwhile
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            _empty_directory(path)
        path.mkdir(exist_ok=True)
        return path

    def _held_names(
        self, trial_dirname: str, base: str, recorded: Iterable[CheckpointRef]
    ) -> set[str]:
        """The names of the directories in `trial_dirname` that the
        `recorded` checkpoints whose path holds `base` are in. Only those
        paths are looked at: a trial may keep thousands of checkpoints."""
        held = set()
        for checkpoint in recorded:
            if base not in checkpoint.path:
                continue
            with suppress(ValueError):  # outside this experiment: holds no name here
                dirname, name = checkpoint_root(self.portable(checkpoint).path)[0].split("/")
                if dirname == trial_dirname:
                    held.add(dirname_generation(name)[0])
        return held

    def relative(self, path: Path) -> str:
        """`path`, inside the experiment directory, as a store path (`/`-joined)."""
        return Path(os.path.normpath(path)).relative_to(self.path).as_posix()

    def stored_checkpoint(self, checkpoint: CheckpointRef) -> str | None:
        """A persistent checkpoint's path in the experiment's store; None,
        with a warning, for one the log names outside this experiment
        (the path comes from state, so it is not trusted)."""
        path = self.portable(checkpoint).path
        try:
            checkpoint_root(path)
        except ValueError:
            logger.warning("%r is not a checkpoint inside this experiment; left alone", path)
            return None
        return path

    def delete_checkpoint(self, path: str | Path) -> bool:
        """Remove a checkpoint (directory or file) that lies inside a trial
        directory of this experiment; whether anything was removed.

        The path comes from state (a log, a snapshot), so it is not trusted:
        a relative path, one outside the experiment directory (also after
        resolving symlinks), the experiment directory or a trial directory
        itself are refused with a warning and left alone. A path that is
        already gone is fine (deleting is idempotent on replay)."""
        candidate = Path(path)
        self._files.drain()
        if not candidate.is_absolute() or not self._inside(candidate, min_depth=2):
            logger.warning(
                "Refusing to delete checkpoint %r: it is not inside a trial directory of "
                "the experiment directory %s.",
                str(path),
                self.path,
            )
            return False
        if candidate.is_symlink() or candidate.is_file():
            candidate.unlink()
            return True
        if candidate.is_dir():
            shutil.rmtree(candidate)
            return True
        return False

    def _inside(self, path: Path, *, min_depth: int = 1) -> bool:
        """Whether `path` lies at least `min_depth` levels below the
        experiment directory, both as written (`..` resolved) and with
        symlinks followed, and no directory between them is a link: a
        trial directory replaced by a link to another trial's resolves
        inside, yet leads to that trial's checkpoints."""
        lexical = Path(os.path.normpath(path.absolute()))
        resolved = path.resolve()
        for candidate in (lexical, resolved):
            try:
                relative = candidate.relative_to(self.path)
            except ValueError:
                return False
            if len(relative.parts) < min_depth:
                return False
        between = lexical.relative_to(self.path).parts[:-1]
        return not any(
            (self.path.joinpath(*between[: depth + 1])).is_symlink()
            for depth in range(len(between))
        )


def _links_in(directory: Path) -> frozenset[str]:
    """The names of the symbolic links in `directory` (none if it is
    missing), told by the listing's entry types: no stat per entry."""
    try:
        with os.scandir(directory) as entries:
            return frozenset(entry.name for entry in entries if entry.is_symlink())
    except (FileNotFoundError, NotADirectoryError):
        return frozenset()


def _empty_directory(path: Path) -> None:
    """Remove everything in `path` without following symlinks out of it."""
    for child in path.iterdir():
        if child.is_symlink() or not child.is_dir():
            child.unlink()
        else:
            shutil.rmtree(child)


def _csv_line(cells: Sequence[str]) -> str:
    """One progress.csv line (the csv module's quoting and line end). Cells
    that need no quoting (most results: numbers, names) are joined as they
    are, which is what the csv module writes for them, in a fifth of its time."""
    joined = ",".join(cells)
    if (
        len(cells) > 1
        and joined.count(",") == len(cells) - 1
        and '"' not in joined
        and "\r" not in joined
        and "\n" not in joined
    ):
        return joined + "\r\n"
    line = io.StringIO()
    csv.writer(line).writerow(cells)
    return line.getvalue()


class _ProgressTable:
    """What this process knows of one progress.csv: its header, how many
    rows it had at its last whole write (`rows`, 0 if unknown), how many were
    appended since, and the cells of those rows whose keys the header lacks
    yet (`late`, by appended row; `held` names those keys in order)."""

    __slots__ = ("appended", "header", "held", "keys", "known", "late", "rows")

    def __init__(self, header: list[str], rows: int) -> None:
        self.header = header
        self.keys = tuple(header)
        self.known = set(header)
        self.rows = rows
        self.appended = 0
        self.held: dict[str, None] = {}
        self.late: dict[int, dict[str, str]] = {}

    def take(self, row: Mapping[str, str]) -> list[str]:
        """`row`'s cells under the header (empty where it has no value),
        counted as appended, its cells the header lacks kept. A row of the
        header's keys in its order, what a trial reports nearly every time,
        is taken as it is (0.8 us less per result)."""
        if tuple(row) == self.keys:
            self.appended += 1
            return list(row.values())
        late = {key: cell for key, cell in row.items() if key not in self.known}
        if late:
            self.late[self.appended] = late
            self.held.update(dict.fromkeys(late))
        self.appended += 1
        return [row.get(key, "") for key in self.header]


class _Appender:
    """Result files kept open for appending, at most `limit` at a time
    (least recently used closed first) so thousands of trials never exhaust
    file descriptors. Reopening for every line cost more than the step that
    produced the result; a raw descriptor spares the buffered file
    object's flush as well.

    `append` holds a write; `flush` hands each file's held writes to the OS
    in one write. The storage's file queue flushes whenever it runs dry
    (`FileQueue`'s `settle`), so a write waits at most for the jobs queued
    behind it, and 32 results a trial reported together cost one write per
    file instead of 32. `forget` writes what its file holds before closing
    it (a rewrite or a read comes next), and more than `max_held` bytes
    held are flushed at once. What a driver killed meanwhile held is what
    the queue held too: a resume rewrites it from the event log."""

    def __init__(self, beneath: Path, limit: int = 128, max_held: int = 1 << 20) -> None:
        self._beneath = beneath
        self._limit = limit
        self._max_held = max_held
        self._open: dict[Path, int] = {}
        self._refused: set[Path] = set()
        self._held: dict[Path, list[bytes]] = {}
        self._held_bytes = 0

    def append(self, path: Path, data: bytes) -> None:
        """Hold `data` for the end of `path`, written at the next `flush`."""
        chunks = self._held.get(path)
        if chunks is None:
            self._held[path] = [data]
        else:
            chunks.append(data)
        self._held_bytes += len(data)
        if self._held_bytes >= self._max_held:
            self.flush()

    def flush(self) -> None:
        """Write every file's held data; a file that fails does not keep
        the others from being written (the first error is raised after)."""
        held, self._held, self._held_bytes = self._held, {}, 0
        failed: OSError | None = None
        for path, chunks in held.items():
            try:
                self._write(path, chunks[0] if len(chunks) == 1 else b"".join(chunks))
            except OSError as error:
                failed = failed or error
        if failed is not None:
            raise failed

    def _write(self, path: Path, data: bytes) -> None:
        descriptor = self._open.pop(path, None)
        if descriptor is None:
            if len(self._open) >= self._limit:
                oldest = next(iter(self._open))
                os.close(self._open.pop(oldest))
            try:
                descriptor = open_fd(path, "a", beneath=self._beneath)
            except NotRegularFileError as error:
                self.refuse(path, error)
                return
        self._open[path] = descriptor  # most recently used last
        write_all(descriptor, data)

    def refuse(self, path: Path, error: NotRegularFileError) -> None:
        """Skip writing `path`, which is not a regular file (a symbolic link
        may point anywhere): a warning the first time, naming it."""
        if path not in self._refused:
            self._refused.add(path)
            logger.warning(
                "Not writing to %s: %s; the event log still records everything", path, error
            )

    def forget(self, path: Path) -> None:
        """Write what `path` holds, then close it (before it is read or
        rewritten in place, or when its trial ends)."""
        chunks = self._held.pop(path, None)
        try:
            if chunks is not None:
                self._held_bytes -= sum(map(len, chunks))
                self._write(path, b"".join(chunks))
        finally:
            descriptor = self._open.pop(path, None)
            if descriptor is not None:
                os.close(descriptor)

    def close(self) -> None:
        """Write everything held and close every file."""
        try:
            self.flush()
        finally:
            self._close_all()

    def _close_all(self) -> None:
        for descriptor in self._open.values():
            os.close(descriptor)
        self._open.clear()
