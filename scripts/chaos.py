"""The chaos test for resume: SIGKILL the driver at random moments, resume,
and check that nothing was lost, repeated or decided differently.

    python scripts/chaos.py drive DIR_ROOT NAME [--resume] [--seed S] [--storage URI]
    python scripts/chaos.py run DIR_ROOT --kills N --seed S
        [--phases normal,resume,checkpoint[,compaction,takeover]] [--second-drivers]
        [--storage URI|s3-local [--same-staging] [--sync-period S]]

`drive` runs one deterministic experiment on a local Ray (or, with
`--resume`, continues it with `Tuner.restore`). `run` is the chaos loop: it
starts `drive` in a subprocess of its own session, waits a random (seeded)
moment after the driver's log shows it is under way, SIGKILLs the driver's
whole process group, checks that no process of that session survives (and
kills and reports any that do), resumes, and repeats `--kills` times; a last
resume runs to the end. Meanwhile an uninterrupted `drive` of the same
experiment with the same seed runs as the baseline.

`--phases` says what the kills aim at, each phase once in every run of that
many kills (seeded order, the first kill never a resume's):

- normal: any moment, 0..`--max-delay` s after the driver's first event;
- resume: the resume itself, 3-50 ms after it begins reading the log or
  after `fit()` begins (lock, log, snapshots), or 0-20 ms after it logs its
  resume event (result-file repair, trial restarts);
- checkpoint: a save, 0..`--checkpoint-window` s after a new
  checkpoint_NNNNNN directory appears (the trainable's checkpoint is
  sixteen 64 KiB files and state.json, copied one by one, the metadata
  last);
  whether the kill came mid-copy, after the copy but before the save was
  logged, or after, is read from the directory and the log;
- compaction (with `--storage`): a compaction of the stored log, between
  its merged object and the deletion of the objects it covers (the
  seeded-chosen one of those deletions);
- takeover (with `--storage`): a resume taking the killed driver's lease
  over, just after its lease is stored (before it reads the storage), or
  just after it marked where it takes the log over (before it ships
  anything; `shell.mirror.stored_state`).

The last two are SIGKILLs the driver sends its own process group at that
exact call of its store (`aim_kill`), so they land where they aim every
time; give `--sync-period 0.1` so that a run ships often enough to
compact (a compaction merges 16 shipments).

`--second-drivers` starts, at the first event of every normal round's
driver and of the last one, a second `drive --resume` on the same
directory, and waits for it before the kill.

Then the checks:

(a) every trial ended TERMINATED, and did so exactly once in the event log;
    the log replays and matches the snapshots the live runs took;
(b) each trial's result.json (and progress.csv) holds training_iteration
    1..n exactly once each, n being the trial's last iteration, with the
    values a pure function of the config and the iteration gives (so every
    resume restarted from the checkpoint the counters say it did), and one
    row with done=true, the last (every trial here ends on an ASHA stop; a
    function that returns ends on its unlogged repeat instead);
(c) the best trial (loss and config) is the baseline's;
(d) every checkpoint the results name (newest and kept) is whole: every
    file complete, of the iteration its name and metadata say (a restore
    from a damaged one fails the trial, so (a) catches those too); and no
    checkpoint directory older than a trial's newest named one is left on
    disk (retention dropped it);
(e) every driver that logged an event held the driver lock, the driver
    after a killed one took its lock over, the last released it;
(f) with `--second-drivers`: each second driver was refused (exit 2, the
    message naming the running driver's pid), or found that driver ended.

The report ends with the figures: kills landed by where they landed,
second drivers refused, killed drivers' locks taken over.

`--storage URI` keeps both experiments in storage (`URI/chaos`,
`URI/baseline`; `s3-local` starts an S3 server, moto's, on 127.0.0.1 in
the loop's process and uses a fresh bucket): every driver works in a
staging directory of its own under DIR_ROOT/staging (a fresh machine;
`--same-staging`: one for all, the machine that ran the killed driver)
and a resume is given nothing but the URI. A first driver is killed only
once the storage holds its log (before, there is nothing to resume); a
checkpoint kill watches the storage for a new checkpoint directory (an
upload takes longer than a local copy: widen `--checkpoint-window`).
The checks read what the storage holds (fetched into DIR_ROOT/fetched):
(d) downloads every checkpoint the log names and looks for dropped ones
left in the storage; (e) is per staging directory (with fresh ones there
is no lock to take over: a second machine is not refused by a lock, and
`--second-drivers` starts the second driver in the first's staging
directory, the same machine).

The exit code of `run` is 0 only if every check passes. Linux only: the
session's processes are found in /proc.

What a SIGKILL of the driver's process group leaves: Ray's GCS, raylet and
agents are in the group and die with it; Ray's workers put themselves in
process groups of their own (same session), so they outlive the kill, and
notice the raylet is gone within about 3 s. A worker still starting up
(`default_worker.py`, not yet `ray::...`) lingers about 25 s; those are
the ones `reap_session` kills. /dev/shm is left clean; Ray's session
directories stay in /tmp/ray, as after any run.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import random
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import tunecore
from tunecore import ResultGrid, RunConfig, SyncConfig, TuneConfig, Tuner
from tunecore.core.checkpoints import dirname_generation
from tunecore.core.experiment import ExperimentState, step
from tunecore.core.experiment.snapshot import decode_state
from tunecore.model import (
    CheckpointSaved,
    JsonValue,
    Rejection,
    ResultReported,
    TrialState,
    TrialStatus,
)
from tunecore.schedulers import ASHAScheduler
from tunecore.shell.eventlog import LogError, read_log
from tunecore.shell.lock import LOCK_FILE, ExperimentLockedError
from tunecore.shell.mirror.stored_state import fetch_state, stored_log
from tunecore.shell.replay import replay
from tunecore.shell.storage.arrow_store import ArrowStore
from tunecore.shell.storage.layout import ExperimentStorage, safe_name
from tunecore.shell.storage.local_store import LocalStore
from tunecore.shell.storage.resolve import resolve_storage, staging_root, within
from tunecore.shell.storage.store import Store, checkpoint_root, join_uri
from tunecore.shell.trainable.checkpoint_files import META_FILE, read_meta
from tunecore.shell.trial_files import PROGRESS_FILE, RESULT_FILE

# -- the experiment ---------------------------------------------------------------------------

ITERATIONS = 20
"""Iterations a trial runs unless ASHA stops it (ASHA's max_t too)."""

SECONDS_PER_ITERATION = 0.1
"""The work of one iteration: real time, so that a kill lands mid-run."""

GRID = (0.5, 0.1, 0.9, 0.3, 0.7, 0.2)
"""Six trials. Not sorted by quality, so ASHA stops some trials and lets
others run on, depending on which reaches a rung first."""

TARGET = 0.33
METRIC = "loss"
STATE_FILE = "state.json"
CHECKPOINT_PREFIX = "checkpoint_"
SHARDS = 16
SHARD_BYTES = 64 * 1024
"""A checkpoint holds SHARDS files of 64 KiB and state.json: saving one
copies them one after another (some 2 ms here), so a kill can land in the
middle. state.json names both numbers, so each checkpoint checks itself."""
DEFAULT_SEED = 7
CHAOS_NAME = "chaos"
BASELINE_NAME = "baseline"


def expected_loss(config: dict[str, JsonValue], iteration: int) -> float:
    """The loss of `config` at `iteration`: a pure function, so that a run
    that was killed and resumed must report exactly the baseline's numbers.

    The config part ranks the trials the same way at every iteration, so the
    best trial is never below an ASHA cutoff: it runs to the end in every
    run, whatever the timing, and its last loss is comparable."""
    x, y = config["x"], config["y"]
    assert isinstance(x, float)
    assert isinstance(y, float)
    return (x - TARGET) ** 2 + y**2 + 1.0 / iteration


def shard_bytes(iteration: int, shard: int, size: int) -> bytes:
    """The content of the checkpoint file `shard_NN.bin` at `iteration`:
    known in advance, so a checkpoint cut short shows in any of its files."""
    line = f"iteration {iteration}, shard {shard}\n".encode()
    return (line * (size // len(line) + 1))[:size]


def write_state(directory: Path, iteration: int) -> None:
    """The trainable's checkpoint: the shards first, state.json (which names
    them) last."""
    for shard in range(SHARDS):
        data = shard_bytes(iteration, shard, SHARD_BYTES)
        (directory / f"shard_{shard:02d}.bin").write_bytes(data)
    state = {"iteration": iteration, "shards": SHARDS, "shard_bytes": SHARD_BYTES}
    (directory / STATE_FILE).write_text(json.dumps(state))


def content_problems(directory: Path) -> tuple[int | None, list[str]]:
    """The iteration a checkpoint directory's state.json names, and what is
    wrong with its files (nothing: the checkpoint is whole)."""
    try:
        state = json.loads((directory / STATE_FILE).read_text())
        iteration, shards, size = (int(state[k]) for k in ("iteration", "shards", "shard_bytes"))
    except (OSError, ValueError, KeyError, TypeError) as error:
        return None, [f"{STATE_FILE}: {type(error).__name__}: {error}"]
    problems = []
    for shard in range(shards):
        path = directory / f"shard_{shard:02d}.bin"
        try:
            data = path.read_bytes()
        except OSError as error:
            problems.append(f"{path.name}: {type(error).__name__}")
            continue
        if data != shard_bytes(iteration, shard, size):
            problems.append(f"{path.name}: {len(data)} bytes, not iteration {iteration}'s")
    return iteration, problems


def train(config: dict[str, JsonValue]) -> None:
    """The trainable: resumes from its checkpoint (the iteration it reached,
    as JSON, beside files of "weights" it checks are whole, `write_state`),
    sleeps as its work, reports the loss with a checkpoint every iteration.

    The checkpoint directory is temporary: tunecore saves it (copies it,
    file by file, into the trial's checkpoint_NNNNNN/) while this function
    is parked in `report`, before the next iteration starts."""
    start = 0
    restored = tunecore.get_checkpoint()
    if restored is not None:
        with restored.as_directory() as directory:
            iteration, problems = content_problems(Path(directory))
            if iteration is None or problems:
                raise RuntimeError(f"restored a damaged checkpoint {directory}: {problems}")
            start = iteration
    trial_dir = tunecore.get_context().trial_dir
    for iteration in range(start + 1, ITERATIONS + 1):
        time.sleep(SECONDS_PER_ITERATION)
        # In the trial directory: a temporary directory a kill leaves behind
        # is then removed with the experiment, not left in /tmp.
        with tempfile.TemporaryDirectory(prefix="user_state_", dir=trial_dir) as directory:
            write_state(Path(directory), iteration)
            tunecore.report(
                {
                    METRIC: expected_loss(config, iteration),
                    "step": iteration,
                    "resumed_from": start,
                },
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def make_tuner(root: Path | str, name: str, seed: int, sync_period: float | None = None) -> Tuner:
    """The experiment: 6 trials (a grid times one seeded random value) under
    ASHA, every event synced (`fsync_interval_ms=0`), the newest 2
    checkpoints kept (so retention deletes checkpoints while kills land);
    shipped every `sync_period` seconds if given (storage only)."""
    return Tuner(
        train,
        param_space={"x": tunecore.grid_search(list(GRID)), "y": tunecore.uniform(-0.05, 0.05)},
        tune_config=TuneConfig(
            metric=METRIC,
            mode="min",
            seed=seed,
            scheduler=ASHAScheduler(max_t=ITERATIONS, grace_period=4, reduction_factor=2),
        ),
        run_config=RunConfig(
            name=name,
            storage_path=str(root),
            fsync_interval_ms=0,
            verbose=0,
            checkpoint_config=tunecore.CheckpointConfig(num_to_keep=2),
            sync_config=SyncConfig()
            if sync_period is None
            else SyncConfig(sync_period=sync_period),
        ),
    )


REFUSED = 2
"""`drive`'s exit code when another driver holds the experiment (the CLI's
for `ExperimentLockedError`)."""


def aim_kill(aim: str) -> None:
    """Make this driver SIGKILL its process group (itself, and the Ray it
    started) at the moment `aim` names, by wrapping its stores' writes and
    deletions: `compaction:N` before the Nth deletion of objects a
    compaction merged, `lease` just after a lease is stored (a take-over,
    in a resume), `fence` just after its fence is stored. It prints
    `killed: <aim>` first."""
    phase, _, nth = aim.partition(":")
    merged: list[tuple[int, int]] = []
    deletes = 0

    def die() -> None:
        print(f"killed: {aim}", flush=True)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    def after_write(rel: str) -> None:
        if (match := _SEGMENT.search(rel)) is not None:
            merged[:] = [(int(match.group(1)), int(match.group(2)))]
        if (phase == "lease" and rel.endswith("driver.lease")) or (
            phase == "fence" and "events/fence_" in rel
        ):
            die()

    def before_delete(rel: str) -> None:
        nonlocal deletes
        match = _SEGMENT.search(rel)
        if phase != "compaction" or match is None or not merged:
            return
        start, end = int(match.group(1)), int(match.group(2))
        if merged[0][0] <= start and end <= merged[0][1] and (start, end) != merged[0]:
            deletes += 1
            if deletes == int(nth):
                die()

    for cls in (LocalStore, ArrowStore):
        write, delete = cls.write_bytes, cls.delete_file

        def write_bytes(self: Any, rel: str, data: bytes, write: Any = write) -> None:
            write(self, rel, data)
            after_write(rel)

        def delete_file(self: Any, rel: str, delete: Any = delete) -> None:
            before_delete(rel)
            delete(self, rel)

        cls.write_bytes = write_bytes  # type: ignore[method-assign]
        cls.delete_file = delete_file  # type: ignore[method-assign]


def drive(
    root: Path,
    name: str,
    *,
    resume: bool,
    seed: int,
    notify_fd: int | None = None,
    second: bool = False,
    storage: str | None = None,
    aim: str | None = None,
    sync_period: float | None = None,
) -> int:
    """Run (or continue) the experiment `root/name` on a Ray of its own
    (with `storage`, a URI, the experiment `storage/name`: a resume is
    given nothing but its URI).

    Ray is started here, not left to tunecore, to pin it: 2 CPUs, no
    dashboard, and always a new local cluster (the chaos loop removes
    RAY_ADDRESS from our environment). The GCS address is printed so the
    loop can check that no two drivers shared a Ray.

    `notify_fd` (a pipe from the chaos loop) is told "restore" as
    `Tuner.restore` starts reading the log and "fit" as `fit()` starts, so
    that a kill can be timed to land a few milliseconds into a resume.
    A `second` driver is one started while another runs the experiment:
    it starts no Ray before `fit()` (it is meant to be refused there; were
    it not, tunecore would start one). A refusal (`ExperimentLockedError`)
    prints the message and exits `REFUSED`. `aim`: see `aim_kill`;
    `sync_period`: the shipping period (`SyncConfig`) of a new experiment."""
    if aim:
        aim_kill(aim)

    def notify(marker: str) -> None:
        if notify_fd is not None:
            os.write(notify_fd, f"{marker}\n".encode())

    if not second:
        import ray  # noqa: PLC0415 - only the driver needs Ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        print(f"ray gcs address: {ray.get_runtime_context().gcs_address}", flush=True)
    try:
        try:
            if resume:
                notify("restore")
                # From a URI, the restore already takes the staging dir's lock.
                tuner = Tuner.restore(
                    join_uri(storage, name) if storage else root / name,
                    trainable=train,
                    resume_unfinished=True,
                    resume_errored=False,
                    restart_errored=False,
                )
            else:
                tuner = make_tuner(storage or root, name, seed, sync_period)
            notify("fit")
            results = tuner.fit()
        except ExperimentLockedError as error:
            print(f"refused: {error}", flush=True)
            return REFUSED
    finally:
        if "ray" in sys.modules:  # a second driver not refused had tunecore start one
            sys.modules["ray"].shutdown()
    statuses = [str(r.status) for r in results]
    print(f"finished: {statuses}, error: {results.experiment_error}", flush=True)
    ok = results.experiment_error is None and all(
        r.status is TrialStatus.TERMINATED for r in results
    )
    return 0 if ok else 1


# -- where the experiments live ---------------------------------------------------------------

S3_LOCAL = "s3-local"
"""`--storage s3-local`: an S3 server (moto's) that the chaos loop starts on
127.0.0.1 for the run, and a fresh bucket on it."""
S3_KEY = "chaos"


@dataclass(frozen=True)
class Place:
    """Where the experiments live and where each driver works.

    Without a `uri`, the experiment `name` is `root/name`, where every
    driver works. With one (`--storage URI`), it is `uri/name`: each
    driver works in a staging directory of its own, `root/staging/<slot>`
    (`TUNECORE_STAGING`; the slot is the driver's number), so every resume
    is a fresh machine with nothing but the URI; with `same_staging`, all
    share `root/staging/shared`, the machine the killed driver ran on (a
    resume then keeps what that driver had not shipped). Trial scratch
    goes under `root/scratch`. The loop times its kills from the driver's
    own directory (the log there is ahead of storage by the shipper's
    lag) and the checks read what the storage holds (`stored_state`)."""

    root: Path
    uri: str | None = None
    same_staging: bool = False
    sync_period: float | None = None
    """Seconds between shipments of a new experiment (`--sync-period`)."""

    def describe(self) -> str:
        if self.uri is None:
            return ""
        shown = self.uri.split("?")[0].replace(f"{S3_KEY}:{S3_KEY}@", "")
        staging = "one staging dir" if self.same_staging else "a fresh staging dir"
        return f"{shown} ({staging} per driver)"

    def env(self, slot: str) -> dict[str, str]:
        """The driver's environment beyond ours."""
        if self.uri is None:
            return {}
        staging = self.root / "staging" / ("shared" if self.same_staging else slot)
        return {"TUNECORE_STAGING": str(staging), "TUNECORE_SCRATCH": str(self.root / "scratch")}

    def workdir(self, name: str, slot: str) -> Path:
        """The experiment directory the driver in `slot` works in."""
        if self.uri is None:
            return self.root / name
        spec, _ = resolve_storage(self.uri)
        digest = Path(staging_root(spec)).name  # staging_root reads our environment: only its name
        staging = Path(self.env(slot)["TUNECORE_STAGING"])
        return staging / digest / safe_name(name, fallback="experiment")

    def store(self, name: str) -> Store:
        assert self.uri is not None
        _, root = resolve_storage(self.uri)
        return within(root, name)

    def stored_state(self, name: str) -> Path:
        """A local directory holding the experiment as the storage holds it
        now: `root/name` itself, or its state fetched from the URI into
        `root/fetched/name` (checkpoints stay in storage)."""
        if self.uri is None:
            return self.root / name
        local = self.root / "fetched" / name
        shutil.rmtree(local, ignore_errors=True)
        local.mkdir(parents=True)
        with contextlib.suppress(FileNotFoundError):  # nothing stored yet
            fetch_state(self.store(name), local)
        return local

    def event_count(self, name: str, slot: str) -> int:
        """How many events the driver in `slot` starts from: those of its
        directory's log, or of the stored log if that holds more (a resume
        in a fresh staging directory begins by fetching it)."""
        local = event_count(self.workdir(name, slot))
        if self.uri is None:
            return local
        return max(local, event_count(self.stored_state(name)))

    def log_size(self, name: str, slot: str) -> int:
        """The size of the log the driver in `slot` starts from (as `event_count`)."""
        local = log_size(self.workdir(name, slot))
        if self.uri is None:
            return local
        return max(local, len(stored_log(self.store(name))))

    def checkpoints(self, name: str) -> set[PurePosixPath]:
        """Every checkpoint_NNNNNN directory of the experiment's trials now
        (where workers put them: in storage for a URI), relative to it."""
        if self.uri is None:
            directory = self.root / name
            return {PurePosixPath(p.relative_to(directory)) for p in checkpoint_dirs(directory)}
        return stored_checkpoint_dirs(self.store(name))

    def holds(self, name: str, rel: str) -> bool:
        if self.uri is None:
            return (self.root / name / rel).exists()
        return self.store(name).exists(rel)


def stored_checkpoint_dirs(store: Store) -> set[PurePosixPath]:
    """Every checkpoint_NNNNNN directory under a trial directory in `store`."""
    found: set[PurePosixPath] = set()
    for trial in store.list():
        if trial in ("events", "snapshots"):
            continue
        found.update(
            PurePosixPath(trial, entry)
            for entry in store.list(trial)
            if entry.startswith(CHECKPOINT_PREFIX)
        )
    return found


@contextlib.contextmanager
def local_s3() -> Iterator[str]:
    """An S3 server (moto's) on 127.0.0.1 for as long as the loop runs, and
    the URI of a fresh bucket on it (endpoint and dummy keys in the URI, so
    that a driver needs nothing but it)."""
    import logging  # noqa: PLC0415

    from moto.server import ThreadedMotoServer  # noqa: PLC0415 - only for s3-local
    from pyarrow.fs import S3FileSystem  # noqa: PLC0415

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        options = f"endpoint_override={host}:{port}&scheme=http&region=us-east-1"
        S3FileSystem(
            endpoint_override=f"{host}:{port}",
            scheme="http",
            access_key=S3_KEY,
            secret_key=S3_KEY,
            region="us-east-1",
            allow_bucket_creation=True,
        ).create_dir("chaos")
        yield f"s3://{S3_KEY}:{S3_KEY}@chaos/runs?{options}"
    finally:
        server.stop()


# -- the chaos loop ---------------------------------------------------------------------------

POLL_S = 0.05
FAST_POLL_S = 0.0005
"""How often the loop looks for the moment a kill aims at (a checkpoint
directory appearing, the log growing): a save lasts a few milliseconds."""
START_TIMEOUT_S = 180.0
"""How long a driver may take to log its first event (Ray's start included)."""
RUN_TIMEOUT_S = 300.0
"""How long the last driver may take to end by itself (then it is killed
and the checks report what the log holds)."""
SECOND_TIMEOUT_S = 120.0
"""How long a second driver may take to be refused (then it is killed)."""
LINGER_TIMEOUT_S = 5.0
"""How long the processes of a killed driver's session may take to die
(Ray's workers notice their raylet is gone) before they are killed."""
SCRIPT = Path(__file__).resolve()

PHASES = ("normal", "resume", "checkpoint")
"""What a kill can aim at: any moment of a run, the first milliseconds of a
resume, a checkpoint being saved."""
STORAGE_PHASES = ("compaction", "takeover")
"""What a kill can aim at when the experiment is in storage: a compaction
of the stored log, a lease take-over."""
RESUMING = frozenset({"resume", "takeover"})
"""Phases only a resume has: never the first kill's."""
TAKEOVER_AIMS = {
    "lease": "take-over, just after the new lease was stored",
    "fence": "take-over, just after its fence was stored",
}
_SEGMENT = re.compile(r"events/seg_(\d{16})_(\d{16})")
RESUME_ANCHORS = {
    "restore": "Tuner.restore began reading the log",
    "fit": "fit() began (lock, log, snapshots)",
    "resumed": "its resume event was logged (result-file repair, trial restarts)",
}
"""The moments of a resume a kill is timed from, and what follows them."""
RESUME_DELAY_S = (0.003, 0.050)
"""A kill lands this long after the "restore" or "fit" mark..."""
RESUMED_DELAY_S = (0.0, 0.020)
"""...or this long after the resume's first event is logged."""
CHECKPOINT_WINDOW_S = 0.005
"""A checkpoint kill lands up to this long after a new checkpoint_NNNNNN
directory appears. Measured here (2 busy cores): the metadata, written
last, appears 2-5 ms after the directory (median 3), the save is logged
about 1 ms later."""


@dataclass
class SessionProcess:
    pid: int
    state: str
    command: str

    @property
    def short(self) -> str:
        """The program, or the script a Python runs; Ray's workers and
        actors name themselves (`ray::IDLE`, `ray::TrialHost.train`)."""
        words = self.command.split()
        if not words:
            return "<exiting>"
        if Path(words[0]).name.startswith("python") and len(words) > 1:
            return Path(words[1]).name
        return Path(words[0]).name if words[0].startswith("/") else words[0]


@dataclass
class DriveRecord:
    """One driver process: when it started and ended, whether it was killed,
    what the kill aimed at and where it landed, which pid the experiment's
    lock named, and what of its session outlived it."""

    name: str
    resume: bool
    log: Path
    session: int  # the driver's pid, which is its session's id
    started: float
    phase: str = "normal"  # normal, resume, checkpoint; final (the last resume); second
    workdir: Path = Path()  # the experiment directory it works in (a staging one for a URI)
    slot: str = ""  # its staging directory's name (a second driver shares its first's)
    delay: float | None = None
    aim: str = ""  # the moment the kill was timed from, when not the first event
    landed_in: str | None = None  # where the kill landed, for the figures
    first_event: float | None = None
    killed: float | None = None
    ended: float | None = None
    returncode: int | None = None
    gcs_address: str | None = None
    notify: int | None = None  # the read end of the driver's notify pipe
    marks: dict[str, float] = field(default_factory=dict)
    lock_before: int | None = None  # the pid driver.lock named as this driver started
    lock_holder: int | None = None  # the pid it named at this driver's first new event
    done_before: bool = False  # the log had the experiment finished as this driver started
    against: DriveRecord | None = None  # a second driver: the driver it was started against
    first_running: bool | None = None  # a second driver: that one still ran as it ended
    lingering: list[SessionProcess] = field(default_factory=list)
    linger_seconds: float = 0.0
    force_killed: list[SessionProcess] = field(default_factory=list)

    @property
    def kill_landed(self) -> bool:
        """The kill hit a driver still running (not one that had finished)."""
        return self.killed is not None and self.returncode == -signal.SIGKILL

    @property
    def refused(self) -> bool:
        """A second driver refused, naming the driver it was started against."""
        return (
            self.against is not None
            and self.returncode == REFUSED
            and f"pid {self.against.session} " in self.log.read_text(errors="replace")
        )

    def describe(self, origin: float) -> str:
        if self.against is not None:
            return self._describe_second(origin)
        what = "resume" if self.resume else "start"
        head = f"{self.name} {what}: "
        if self.first_event is not None:
            head += f"first new event after {self.first_event - self.started:.1f} s; "
        if self.kill_landed:
            assert self.killed is not None
            aim = self.aim or f"{self.delay:.2f} s after it"
            head += f"SIGKILL at +{self.killed - origin:.1f} s ({aim}), {self.landed_in}"
        else:
            assert self.ended is not None
            head += f"exit {self.returncode} after {self.ended - self.started:.1f} s"
            if self.killed is not None:
                head += " (it had finished before the kill)"
        if self.lock_before is not None and self.lock_before != self.session:
            head += f"; driver.lock named pid {self.lock_before} as it started"
        if self.lock_holder is not None:
            head += f", its own pid {self.lock_holder} at its first event"
        if self.done_before:
            head += "; the log had the experiment finished"
        return head + self._describe_session()

    def _describe_second(self, origin: float) -> str:
        assert self.against is not None
        assert self.ended is not None
        head = (
            f"  second driver (pid {self.session}) against pid {self.against.session}, "
            f"+{self.started - origin:.1f} s: exit {self.returncode} after "
            f"{self.ended - self.started:.1f} s"
        )
        if self.refused:
            head += ", refused naming its pid"
        elif not self.first_running:
            head += ", not refused: the first driver had ended"
        return head + self._describe_session()

    def _describe_session(self) -> str:
        text = ""
        if self.lingering:
            kinds = sorted({p.short for p in self.lingering})
            text += (
                f"; {len(self.lingering)} processes of its session outlived it "
                f"({', '.join(kinds)}), gone after {self.linger_seconds:.1f} s"
            )
        else:
            text += "; no process of its session outlived it"
        if self.force_killed:
            killed = ", ".join(f"{p.pid} {p.short}" for p in self.force_killed)
            text += f"; had to SIGKILL: {killed}"
        return text


@dataclass
class Check:
    name: str
    passed: bool
    details: list[str]


@dataclass
class ChaosReport:
    root: Path
    kills: int
    seed: int
    drives: list[DriveRecord]
    baseline: DriveRecord
    checks: list[Check]
    seconds: float
    second_drives: list[DriveRecord] = field(default_factory=list)
    storage: str = ""

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def kills_landed(self) -> int:
        return sum(1 for d in self.drives if d.kill_landed)

    def landed(self) -> Counter[str]:
        """How many kills landed where (`DriveRecord.landed_in`)."""
        return Counter(d.landed_in or d.phase for d in self.drives if d.kill_landed)

    @property
    def takeovers(self) -> int:
        """Drivers that took over the lock a killed driver held."""
        killed = {d.session for d in self.drives if d.kill_landed}
        return sum(1 for d in self.drives if d.lock_holder == d.session and d.lock_before in killed)

    def figures(self) -> str:
        """The counts docs/reliability.md quotes."""
        landed = ", ".join(f"{where} {n}" for where, n in sorted(self.landed().items()))
        text = f"kills landed: {self.kills_landed} of {self.kills} ({landed or 'none'})"
        if self.second_drives:
            refused = sum(1 for d in self.second_drives if d.refused)
            text += f"; second drivers refused: {refused} of {len(self.second_drives)}"
        return text + f"; killed drivers' locks taken over: {self.takeovers}"

    def render(self) -> str:
        origin = min(d.started for d in [*self.drives, self.baseline])
        lines = [
            f"chaos: {self.kills} kills requested, {self.kills_landed} landed mid-run, "
            f"seed {self.seed}, in {self.root}"
            + (f", storage {self.storage}" if self.storage else "")
        ]
        for drive in [*self.drives, self.baseline]:
            lines.append(f"  {drive.describe(origin)}")
            lines += [f"  {s.describe(origin)}" for s in self.second_drives if s.against is drive]
        for check in self.checks:
            lines.append(f"[{'PASS' if check.passed else 'FAIL'}] {check.name}")
            lines += [f"    {d}" for d in check.details]
        lines.append(f"figures: {self.figures()}")
        lines.append(f"{'PASSED' if self.passed else 'FAILED'} in {self.seconds:.1f} s")
        return "\n".join(lines)


def child_env() -> dict[str, str]:
    """Our environment without RAY_ADDRESS: a driver's `ray.init()` must
    start a Ray of its own (one we can kill), never join another."""
    return {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}


def start_drive(
    place: Place,
    name: str,
    *,
    resume: bool,
    seed: int,
    number: int,
    phase: str = "normal",
    notify: bool = False,
    slot: str | None = None,
    aim: str | None = None,
) -> tuple[subprocess.Popen[bytes], DriveRecord]:
    """Start `drive` as the leader of a new session (so its process group,
    and every process it starts, can be found and killed); with `notify`,
    give it a pipe to tell us where its resume is. `slot` names its staging
    directory (`Place`; a driver's number by default)."""
    root = place.root
    slot = f"{number:02d}" if slot is None else slot
    logs = root / "drives"
    logs.mkdir(parents=True, exist_ok=True)
    kind = "second" if phase == "second" else "resume" if resume else "start"
    log = logs / f"{number:02d}_{name}_{kind}.log"
    command = [sys.executable, str(SCRIPT), "drive", str(root), name, "--seed", str(seed)]
    if resume:
        command.append("--resume")
    if phase == "second":
        command.append("--second")
    if place.uri is not None:
        command += ["--storage", place.uri]
    if place.sync_period is not None:
        command += ["--sync-period", str(place.sync_period)]
    if aim is not None:
        command += ["--aim", aim]
    read_end, write_end = os.pipe() if notify else (None, None)
    if write_end is not None:
        command += ["--notify-fd", str(write_end)]
    try:
        with log.open("wb") as output:
            process = subprocess.Popen(
                command,
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**child_env(), **place.env(slot)},
                pass_fds=() if write_end is None else (write_end,),
            )
    finally:
        if write_end is not None:
            os.close(write_end)
    record = DriveRecord(
        name,
        resume,
        log,
        session=process.pid,
        started=time.monotonic(),
        phase=phase,
        workdir=place.workdir(name, slot),
        slot=slot,
        notify=read_end,
        lock_before=lock_holder(place.workdir(name, slot)),
        done_before=experiment_done(place.stored_state(name)),
    )
    return process, record


def experiment_done(experiment_dir: Path) -> bool:
    """Whether the log says the experiment is finished (a kill can land
    after its last event: the next resume then has nothing to run)."""
    if not (experiment_dir / "events.log").exists():
        return False
    try:
        return replay(experiment_dir, verify=False, keep_commands=False, quiet=True).state.done
    except LogError:
        return False


def lock_holder(experiment_dir: Path) -> int | None:
    """The pid driver.lock names (the driver holding it, or the last one
    that held it and was killed), if any."""
    try:
        return int(json.loads((experiment_dir / LOCK_FILE).read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def event_count(experiment_dir: Path) -> int:
    """How many events the log holds now (0 while it has no header)."""
    try:
        return len(read_log(experiment_dir, quiet=True).events)
    except LogError:
        return 0


def wait_for_new_events(
    process: subprocess.Popen[bytes], experiment_dir: Path, before: int, timeout: float
) -> bool:
    """Poll (bounded) until the log holds more than `before` events: the
    driver has Ray up and logged its first event. False if it exited first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if event_count(experiment_dir) > before:
            return True
        if process.poll() is not None:
            return False
        time.sleep(POLL_S)
    raise TimeoutError(f"no new event in {experiment_dir}/events.log within {timeout:.0f} s")


def await_start(
    process: subprocess.Popen[bytes], record: DriveRecord, experiment_dir: Path, before: int
) -> bool:
    """Wait for the driver's first new event; note when, and the pid the
    lock names then (this driver's own, if it took the lock)."""
    if not wait_for_new_events(process, experiment_dir, before, START_TIMEOUT_S):
        return False
    record.first_event = time.monotonic()
    record.lock_holder = lock_holder(experiment_dir)
    return True


def await_stored(
    place: Place, name: str, process: subprocess.Popen[bytes], record: DriveRecord
) -> bool:
    """For an experiment kept at a URI: wait (bounded) until the storage
    holds its log, and time the kill from then (`first_event`): a driver
    killed before its first shipment leaves nothing to resume from, as
    the resume then says. False if the driver ended first."""
    if place.uri is None:
        return True
    deadline = time.monotonic() + START_TIMEOUT_S
    while not stored_log(place.store(name)):
        if process.poll() is not None:
            return False
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing of {name} reached {place.describe()} in time")
        time.sleep(POLL_S)
    record.first_event = time.monotonic()
    return True


def wait_for_mark(record: DriveRecord, mark: str, timeout: float) -> float | None:
    """When the driver said `mark` on its notify pipe (bounded), or None if
    it ended first."""
    deadline = time.monotonic() + timeout
    while mark not in record.marks:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{record.log.name}: no {mark!r} within {timeout:.0f} s")
        if not read_marks(record, min(left, POLL_S)):
            return None  # the driver ended (or was killed) first
    return record.marks[mark]


def read_marks(record: DriveRecord, timeout: float) -> bool:
    """Add what the driver said on its pipe within `timeout` to its marks,
    each with the time it was read (the marks are whole lines: a write
    of a few bytes to a pipe is atomic); False at the pipe's end."""
    assert record.notify is not None
    ready, _, _ = select.select([record.notify], [], [], timeout)
    if not ready:
        return True
    chunk = os.read(record.notify, 4096)
    now = time.monotonic()
    for line in chunk.decode().split():
        record.marks.setdefault(line, now)
    return bool(chunk)


def wait_until(
    process: subprocess.Popen[bytes], condition: Callable[[], bool], timeout: float
) -> float | None:
    """Poll `condition` every `FAST_POLL_S` until it holds: when it did, or
    None if the driver ended or `timeout` passed first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if condition():
            return time.monotonic()
        time.sleep(FAST_POLL_S)
    return None


def log_size(experiment_dir: Path) -> int:
    try:
        return (experiment_dir / "events.log").stat().st_size
    except FileNotFoundError:
        return 0


def checkpoint_dirs(experiment_dir: Path) -> set[Path]:
    """Every checkpoint_NNNNNN directory in the trial directories now
    (absolute paths)."""
    found: set[Path] = set()
    with contextlib.suppress(FileNotFoundError), os.scandir(experiment_dir) as trials:
        for trial in trials:
            if not trial.is_dir():
                continue
            with contextlib.suppress(FileNotFoundError), os.scandir(trial.path) as entries:
                found.update(Path(e.path) for e in entries if e.name.startswith(CHECKPOINT_PREFIX))
    return found


def session_processes(session: int) -> list[SessionProcess]:
    """Every process of `session` (from /proc), zombies included."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            raw = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # it ended while we looked
        # The command name is in parentheses and may hold spaces: split after it.
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == session:
            command = raw.replace(b"\0", b" ").decode(errors="replace").strip()
            found.append(SessionProcess(int(entry.name), fields[0], command[:200]))
    return found


def alive(processes: Sequence[SessionProcess]) -> list[SessionProcess]:
    return [p for p in processes if p.state != "Z"]


def reap_session(record: DriveRecord) -> None:
    """After the driver is gone: note what of its session is left, give it
    `LINGER_TIMEOUT_S` to die by itself, then SIGKILL the rest by pid (they
    are ours: the session is the one we created for the driver)."""
    session = record.session
    record.lingering = alive(session_processes(session))
    began = time.monotonic()
    deadline = began + LINGER_TIMEOUT_S
    while (left := alive(session_processes(session))) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    record.linger_seconds = time.monotonic() - began if record.lingering else 0.0
    for process in left:
        try:
            os.kill(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        record.force_killed.append(process)


def kill(process: subprocess.Popen[bytes], record: DriveRecord) -> None:
    """SIGKILL the driver's process group, if the driver still runs."""
    if process.poll() is None:
        record.killed = time.monotonic()
        os.killpg(process.pid, signal.SIGKILL)


def kill_drive(
    place: Place,
    name: str,
    *,
    resume: bool,
    seed: int,
    number: int,
    delay: float,
    second: list[DriveRecord] | None = None,
) -> DriveRecord:
    """One round of chaos: start a driver, wait for its first new event,
    wait `delay` more, SIGKILL its process group, reap it and its session.
    With `second`, a second driver is started at the first event and
    awaited (the kill waits for it), and its record added there."""
    before = place.event_count(name, f"{number:02d}")
    process, record = start_drive(place, name, resume=resume, seed=seed, number=number)
    record.delay = delay
    record.landed_in = "normal"
    try:
        if await_start(process, record, record.workdir, before) and (
            resume or await_stored(place, name, process, record)
        ):
            assert record.first_event is not None
            if second is not None:
                second.append(
                    run_second(
                        place, name, seed=seed, number=number, first_process=process, first=record
                    )
                )
            # The random moment; the wait ends early if the driver ends.
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.0, record.first_event + delay - time.monotonic()))
        kill(process, record)
    finally:
        end_drive(process, record)  # an error above: never leave a driver running
    return record


def kill_aimed(
    place: Place,
    name: str,
    phase: str,
    *,
    resume: bool,
    seed: int,
    number: int,
    rng: random.Random,
) -> DriveRecord:
    """A round aimed at a compaction or a take-over (`STORAGE_PHASES`): the
    driver kills its own process group there (`aim_kill`). It landed if
    the driver says so and died of the SIGKILL; a driver that ended first
    (no compaction was left to do) did not."""
    if phase == "compaction":
        nth = rng.randrange(1, 16)
        aim, where = f"compaction:{nth}", f"compaction, before its deletion {nth} of 16"
    else:
        aim = rng.choice(sorted(TAKEOVER_AIMS))
        where = TAKEOVER_AIMS[aim]
    process, record = start_drive(
        place, name, resume=resume, seed=seed, number=number, phase=phase, aim=aim
    )
    record.aim = aim
    try:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=RUN_TIMEOUT_S)
    finally:
        end_drive(process, record)
    if record.returncode == -signal.SIGKILL and f"killed: {aim}" in record.log.read_text(
        errors="replace"
    ):
        record.killed = record.ended
        record.landed_in = where
    return record


def kill_resume(
    place: Place, name: str, *, seed: int, number: int, rng: random.Random
) -> DriveRecord:
    """A round aimed at a resume's first milliseconds: SIGKILL a resuming
    driver 3-50 ms after it begins reading the log (`Tuner.restore`) or
    after `fit()` begins, or 0-20 ms after its resume event is logged,
    when it repairs the result files and restarts the trials. Where the
    kill landed is read from the pipe and the log afterwards: in
    `Tuner.restore`, in `fit()` before the driver appended anything, or
    after."""
    anchor = rng.choice(sorted(RESUME_ANCHORS))
    low, high = RESUMED_DELAY_S if anchor == "resumed" else RESUME_DELAY_S
    delay = rng.uniform(low, high)
    slot = f"{number:02d}"
    before, size = place.event_count(name, slot), place.log_size(name, slot)
    process, record = start_drive(
        place, name, resume=True, seed=seed, number=number, phase="resume", notify=True
    )
    experiment_dir = record.workdir
    record.delay = delay
    record.aim = f"{delay * 1000:.0f} ms after {RESUME_ANCHORS[anchor]}"
    try:
        mark = wait_for_mark(record, "fit" if anchor == "resumed" else anchor, 120.0)
        if mark is not None and anchor == "resumed":
            mark = wait_until(process, lambda: log_size(experiment_dir) > size, 60.0)
        if mark is not None:
            time.sleep(max(0.0, mark + delay - time.monotonic()))
            kill(process, record)
    finally:
        end_drive(process, record)
    try:
        appended = read_log(experiment_dir, quiet=True).events[before:]
    except LogError:  # a fresh staging directory it had not filled yet
        appended = []
    if not appended and "fit" not in record.marks:
        record.landed_in = "resume, in Tuner.restore"
    elif not appended:
        record.landed_in = "resume, in fit() before its first append"
    else:
        kinds = Counter(type(e).__name__ for e in appended)
        record.landed_in = "resume, after its first append"
        record.aim += f"; it had appended {dict(kinds)}"
    return record


def kill_checkpoint(
    place: Place,
    name: str,
    *,
    resume: bool,
    seed: int,
    number: int,
    delay: float,
    window: float,
    rng: random.Random,
) -> DriveRecord:
    """A round aimed at a checkpoint save: `delay` after the driver's first
    new event, watch the trial directories for a new checkpoint_NNNNNN
    directory (the driver makes it, then a worker copies the trainable's
    files into it, the metadata last, then the driver logs the save and
    retention deletes an older one), and SIGKILL within `window` of its
    appearing. Where the kill landed: mid-copy (no metadata yet), copied
    but not logged, or after the save was logged."""
    jitter = rng.uniform(0.0, window)
    before = place.event_count(name, f"{number:02d}")
    process, record = start_drive(
        place, name, resume=resume, seed=seed, number=number, phase="checkpoint"
    )
    record.delay = delay
    target: PurePosixPath | None = None
    whole = False
    try:
        if await_start(process, record, record.workdir, before) and (
            resume or await_stored(place, name, process, record)
        ):
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=delay)
            seen = place.checkpoints(name)
            new: set[PurePosixPath] = set()

            def appeared() -> bool:
                new.update(place.checkpoints(name) - seen)
                return bool(new)

            if wait_until(process, appeared, 60.0) is not None:
                target = min(new)
                time.sleep(jitter)
                whole = place.holds(name, f"{target}/{META_FILE}")
                kill(process, record)
    finally:
        end_drive(process, record)
    if target is not None:
        record.aim = f"{jitter * 1000:.1f} ms after {short(target)} appeared"
        if target in saved_checkpoints(record.workdir, before):
            record.landed_in = "checkpoint, after its save was logged"
        elif whole:
            record.landed_in = "checkpoint, copied but its save not logged"
        else:
            record.landed_in = "checkpoint, mid-copy"
    return record


def short(checkpoint: PurePosixPath | Path) -> str:
    """A checkpoint directory as trial id and name (the trial directory's
    name goes on with the whole config)."""
    return f"{'_'.join(checkpoint.parent.name.split('_')[:3])}/{checkpoint.name}"


def saved_checkpoints(experiment_dir: Path, since: int) -> set[PurePosixPath]:
    """The persistent checkpoints the log says were saved after its first
    `since` events (relative paths)."""
    try:
        events = read_log(experiment_dir, quiet=True).events[since:]
    except LogError:
        return set()
    return {PurePosixPath(e.checkpoint.path) for e in events if isinstance(e, CheckpointSaved)}


def run_second(
    place: Place,
    name: str,
    *,
    seed: int,
    number: int,
    first_process: subprocess.Popen[bytes],
    first: DriveRecord,
) -> DriveRecord:
    """Start a second driver (`drive --resume --second`) while `first` runs
    the experiment, and wait for it to end: it must be refused, naming
    `first`'s pid, unless `first` had already ended."""
    process, record = start_drive(
        place, name, resume=True, seed=seed, number=number, phase="second", slot=first.slot
    )
    record.against = first
    try:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=SECOND_TIMEOUT_S)
        record.first_running = first_process.poll() is None
    finally:
        end_drive(process, record)
    return record


def finish_drive(
    process: subprocess.Popen[bytes], record: DriveRecord, timeout: float = RUN_TIMEOUT_S
) -> DriveRecord:
    """Wait for a driver to end by itself (bounded), then reap its session."""
    try:
        process.wait(timeout=timeout)
    finally:
        end_drive(process, record)
    return record


def end_drive(process: subprocess.Popen[bytes], record: DriveRecord) -> None:
    """Make sure the driver is gone (SIGKILL to its group if it still runs),
    record how it ended, and reap what its session left behind."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    record.returncode = process.wait(timeout=60)
    record.ended = time.monotonic()
    if record.notify is not None:
        read_marks(record, timeout=0.0)  # what it said before it died
        os.close(record.notify)
        record.notify = None
    reap_session(record)
    record.gcs_address = gcs_address(record.log)


def gcs_address(log: Path) -> str | None:
    prefix = "ray gcs address: "
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    return None


def plan_phases(phases: Sequence[str], kills: int, rng: random.Random) -> list[str]:
    """What each kill aims at: every phase once in each run of len(phases)
    kills, in a seeded order. The first kill hits a start, not a resume
    (`RESUMING`).
    (One phase draws nothing: the seeds of earlier runs keep their delays.)"""
    plan: list[str] = []
    while len(plan) < kills:
        block = list(phases)
        rng.shuffle(block)
        plan += block
    plan = plan[:kills]
    if plan and plan[0] in RESUMING:
        other = next((i for i, p in enumerate(plan) if p not in RESUMING), None)
        if other is None:
            plan[0] = "normal"
        else:
            plan[0], plan[other] = plan[other], plan[0]
    return plan


def run_chaos(
    root: Path,
    *,
    kills: int,
    seed: int,
    max_delay: float = 3.0,
    timeout: float = RUN_TIMEOUT_S,
    phases: Sequence[str] = ("normal",),
    second_drivers: bool = False,
    checkpoint_window: float = CHECKPOINT_WINDOW_S,
    storage: str | None = None,
    same_staging: bool = False,
    sync_period: float | None = None,
) -> ChaosReport:
    """The chaos loop and the checks; see the module docstring. The
    baseline runs at the same time as the chaos, in its own Ray: the 2
    trials a Ray runs at once mostly sleep, so they share the 2 CPUs.
    `storage`: a URI to keep both experiments in (`S3_LOCAL`: a local S3
    server this process runs), `same_staging` and `sync_period` as in
    `Place`. The `STORAGE_PHASES` need a `storage`."""
    if storage is None and (aimed := [p for p in phases if p in STORAGE_PHASES]):
        raise ValueError(f"phases={aimed!r} need the experiment in storage (storage=URI)")
    began = time.monotonic()
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        if storage == S3_LOCAL:
            storage = stack.enter_context(local_s3())
        place = Place(root, storage, same_staging, sync_period)
        drives, baseline, second = chaos_rounds(
            place,
            kills=kills,
            seed=seed,
            max_delay=max_delay,
            timeout=timeout,
            phases=phases,
            second_drivers=second_drivers,
            checkpoint_window=checkpoint_window,
            rng=rng,
        )
        checks = run_checks(place, drives, baseline, second)
    return ChaosReport(
        root,
        kills,
        seed,
        drives,
        baseline,
        checks,
        seconds=time.monotonic() - began,
        second_drives=second or [],
        storage=place.describe(),
    )


def chaos_rounds(
    place: Place,
    *,
    kills: int,
    seed: int,
    max_delay: float,
    timeout: float,
    phases: Sequence[str],
    second_drivers: bool,
    checkpoint_window: float,
    rng: random.Random,
) -> tuple[list[DriveRecord], DriveRecord, list[DriveRecord] | None]:
    """The baseline and the chaos drivers, to the end: their records."""
    baseline_process, baseline = start_drive(
        place, BASELINE_NAME, resume=False, seed=seed, number=0
    )
    drives: list[DriveRecord] = []
    second: list[DriveRecord] | None = [] if second_drivers else None
    try:
        for number, phase in enumerate(plan_phases(phases, kills, rng), start=1):
            delay = rng.uniform(0.0, max_delay)
            resume = number > 1
            if phase == "resume":
                record = kill_resume(place, CHAOS_NAME, seed=seed, number=number, rng=rng)
            elif phase in STORAGE_PHASES:
                record = kill_aimed(
                    place, CHAOS_NAME, phase, resume=resume, seed=seed, number=number, rng=rng
                )
            elif phase == "checkpoint":
                record = kill_checkpoint(
                    place,
                    CHAOS_NAME,
                    resume=resume,
                    seed=seed,
                    number=number,
                    delay=delay,
                    window=checkpoint_window,
                    rng=rng,
                )
            else:
                record = kill_drive(
                    place,
                    CHAOS_NAME,
                    resume=resume,
                    seed=seed,
                    number=number,
                    delay=delay,
                    second=second,
                )
            drives.append(record)
            if not record.kill_landed and record.returncode != 0:
                break  # it failed by itself: resuming again would bury why
        else:
            number = len(drives) + 1
            before = place.event_count(CHAOS_NAME, f"{number:02d}")
            process, final = start_drive(
                place, CHAOS_NAME, resume=True, seed=seed, number=number, phase="final"
            )
            try:
                if await_start(process, final, final.workdir, before) and second is not None:
                    second.append(
                        run_second(
                            place,
                            CHAOS_NAME,
                            seed=seed,
                            number=number,
                            first_process=process,
                            first=final,
                        )
                    )
            finally:
                drives.append(finish_drive(process, final, timeout))
    finally:
        finish_drive(baseline_process, baseline, timeout)
    return drives, baseline, second


# -- the checks -------------------------------------------------------------------------------


@dataclass
class TrialHistory:
    """What the event log says happened to one trial, transition by transition."""

    starts: int = 0
    finishes: int = 0
    results: int = 0
    statuses: list[str] = field(default_factory=list)


def trial_histories(experiment_dir: Path) -> tuple[ExperimentState, dict[str, TrialHistory]]:
    """Feed the log's events to `step` (as replay does) and count, per trial,
    the transitions into RUNNING and into a final status, and the results
    accepted: "finished exactly once" is a fact about these transitions."""
    contents = read_log(experiment_dir)
    state = decode_state(contents.header.initial_state)
    histories: dict[str, TrialHistory] = {}
    for event in contents.events:
        outcome = step(state, event)
        if isinstance(outcome, Rejection):
            continue
        new, _ = outcome
        for trial in new.trials.values():
            history = histories.setdefault(trial.trial_id, TrialHistory())
            old = state.trials.get(trial.trial_id)
            if old is not None and old.status is trial.status:
                continue
            history.statuses.append(str(trial.status))
            if trial.status is TrialStatus.RUNNING:
                history.starts += 1
            elif trial.is_finished:
                history.finishes += 1
        if isinstance(event, ResultReported):
            histories[event.trial_id].results += 1
        state = new
    return state, histories


def check_trials_finished(experiment_dir: Path) -> Check:
    """(a): every trial TERMINATED, each finished exactly once, the
    experiment done without error, and `replay` (with verification against
    the snapshots) agrees with the live runs."""
    details: list[str] = []
    passed = True
    try:
        replayed = replay(experiment_dir)
    except LogError as error:
        return Check("(a) trials finished exactly once; replay verifies", False, [str(error)])
    state, histories = trial_histories(experiment_dir)
    if replayed.state.trials != state.trials:
        passed = False
        details.append("replay() and a step-by-step replay disagree on the trials")
    for trial in ordered(replayed.state):
        history = histories.get(trial.trial_id, TrialHistory())
        line = (
            f"{trial.trial_id} {trial.spec.experiment_tag}: {trial.status}, "
            f"started {history.starts}x, finished {history.finishes}x"
        )
        if trial.status is not TrialStatus.TERMINATED or history.finishes != 1:
            passed = False
            line += "  <-- expected TERMINATED, finished once"
        details.append(line)
    if not replayed.state.done or replayed.state.error is not None:
        passed = False
        details.append(f"experiment done={replayed.state.done}, error={replayed.state.error}")
        in_flight = [t.trial_id for t in ordered(replayed.state) if t.saving_to]
        counts = Counter(type(e).__name__ for e in read_log(experiment_dir, quiet=True).events)
        details.append(f"trials with a save in flight: {in_flight}; events: {dict(counts)}")
    details.append(
        f"replay: {replayed.records} events ({replayed.rejected} rejected), "
        f"{replayed.snapshots_verified} snapshots verified"
        + (f", torn tail at {replayed.torn.offset}" if replayed.torn else "")
    )
    return Check("(a) trials finished exactly once; replay verifies", passed, details)


def ordered(state: ExperimentState) -> list[TrialState]:
    return sorted(state.trials.values(), key=lambda t: state.index[t.trial_id])


def trial_dir(experiment_dir: Path, trial: TrialState) -> Path:
    storage = ExperimentStorage(experiment_dir.parent, experiment_dir.name)
    return experiment_dir / storage.trial_dirname(trial.spec)


def read_rows(path: Path) -> tuple[list[dict[str, JsonValue]], list[str]]:
    """result.json's rows, and a problem for every line that is not a JSON
    object (a line a crash cut short must have been repaired away)."""
    rows: list[dict[str, JsonValue]] = []
    problems: list[str] = []
    if not path.exists():
        return rows, [f"{path.name} is missing"]
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        try:
            row = json.loads(line)
        except ValueError:
            problems.append(f"{path.name} line {number} is not JSON: {line[:80]!r}")
            continue
        if not isinstance(row, dict):
            problems.append(f"{path.name} line {number} is not an object")
            continue
        rows.append(row)
    return rows, problems


def result_problems(experiment_dir: Path, trial: TrialState) -> tuple[int, list[str]]:
    """(b) for one trial: its last iteration n, and what is wrong with its files.

    How a trial ended decides its last row. Stopped by a decision (ASHA at a
    rung or at max_t, as every trial here), its last result is recorded
    with done=True: the last row, and the only one with done=True. Ended by
    its function returning, its last result is the function's final repeat
    (done=True and `__duplicate__`), which the loggers skip: no row says
    done=True. Either way "finished once" shows in the files as iterations
    1..n exactly once each, n the trial's last, and at most one done row,
    the last."""
    problems: list[str] = []
    last = trial.last_result.get("training_iteration")
    if not isinstance(last, int):
        return 0, [f"its last result has no training_iteration: {trial.last_result}"]
    directory = trial_dir(experiment_dir, trial)
    rows, problems = read_rows(directory / RESULT_FILE)
    iterations = [row.get("training_iteration") for row in rows]
    if iterations != list(range(1, last + 1)):
        problems.append(f"result.json iterations {compress(iterations)}, expected 1..{last}")
    for row in rows:
        iteration = row.get("training_iteration")
        if not isinstance(iteration, int) or iteration < 1:
            continue
        if row.get("step") != iteration:
            problems.append(f"iteration {iteration} was the function's step {row.get('step')}")
        expected = expected_loss(trial.spec.config, iteration)
        if row.get(METRIC) != expected:
            problems.append(f"iteration {iteration}: loss {row.get(METRIC)} != {expected}")
        if "__duplicate__" in row:
            problems.append(f"iteration {iteration} is a duplicate: {row}")
        if row.get("trial_id") != trial.trial_id:
            problems.append(f"iteration {iteration} belongs to {row.get('trial_id')}")
    if rows and any(rows[-1].get(k) != trial.last_result.get(k) for k in ("step", METRIC)):
        problems.append(f"the last row {rows[-1]} is not the trial's last result")
    done_rows = [row.get("training_iteration") for row in rows if row.get("done") is not False]
    ended_by_return = trial.last_result.get("__duplicate__") is True
    if done_rows != ([] if ended_by_return else [last]):
        how = "its function returned" if ended_by_return else "it was stopped"
        problems.append(f"rows with done!=false: {done_rows}, but {how} at {last}")
    progress = directory / PROGRESS_FILE
    if progress.exists():
        with progress.open(newline="") as handle:
            csv_iterations = [r.get("training_iteration") for r in csv.DictReader(handle)]
        if csv_iterations != [str(i) for i in range(1, last + 1)]:
            problems.append(f"progress.csv iterations {compress(csv_iterations)}")
    else:
        problems.append("progress.csv is missing")
    return last, problems


def compress(values: Sequence[object]) -> str:
    """A list of iterations in short: runs of consecutive ints as a..b."""
    parts: list[str] = []
    run: list[int] = []
    for value in [*values, None]:
        number = int(value) if isinstance(value, int | str) and str(value).isdigit() else None
        if number is not None and run and number == run[-1] + 1:
            run.append(number)
            continue
        if run:
            parts.append(f"{run[0]}..{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        if number is not None:
            run = [number]
        elif value is not None:
            parts.append(repr(value))
    return "[" + ", ".join(parts) + "]"


def check_result_files(experiment_dir: Path) -> Check:
    """(b) for every trial; see `result_problems`."""
    state = replay(experiment_dir, verify=False, keep_commands=False, quiet=True).state
    passed = True
    details = []
    for trial in ordered(state):
        last, problems = result_problems(experiment_dir, trial)
        details.append(f"{trial.trial_id}: iterations 1..{last}" + ("" if problems else ", ok"))
        details += [f"  <-- {p}" for p in problems[:10]]
        passed = passed and not problems
    return Check("(b) result.json/progress.csv: every iteration exactly once", passed, details)


def best_result(experiment_dir: Path) -> tuple[float, dict[str, JsonValue]] | None:
    """The best trial's last loss and its config (first trial on a tie), as
    `ResultGrid.get_best_result()` picks it, from the replayed state."""
    state = replay(experiment_dir, verify=False, keep_commands=False, quiet=True).state
    best: tuple[float, dict[str, JsonValue]] | None = None
    for trial in ordered(state):
        value = trial.last_result.get(METRIC)
        if not isinstance(value, float) or math.isnan(value):
            continue
        if best is None or value < best[0]:
            best = (value, dict(trial.spec.config))
    return best


def check_best(experiment_dir: Path, baseline_dir: Path) -> Check:
    """(c): the best loss and config equal the uninterrupted run's, exactly
    (the losses are a pure function, so no tolerance is needed)."""
    chaos, baseline = best_result(experiment_dir), best_result(baseline_dir)
    details = [f"after the kills: {chaos}", f"uninterrupted:   {baseline}"]
    passed = chaos is not None and chaos == baseline
    return Check("(c) the best result equals the uninterrupted run's", passed, details)


def check_drivers(drives: Sequence[DriveRecord], baseline: DriveRecord) -> Check:
    """Every driver ended by our kill or ran to its end with exit 0, and the
    last one of the chaos ran to its end: a driver that fails by itself is a
    failure to report (its log says why), not a crash to resume."""
    details = []
    for drive in [*drives, baseline]:
        expected_kill = drive is not baseline and drive is not drives[-1]
        fine = drive.returncode == 0 or (expected_kill and drive.kill_landed)
        if not fine:
            tail = drive.log.read_text(errors="replace").splitlines()[-15:]
            details.append(f"{drive.log.name}: exit {drive.returncode}; its log ends:")
            details += [f"  | {line}" for line in tail]
    return Check("every driver was killed or ran to its end", not details, details or ["yes"])


def check_own_rays(drives: Sequence[DriveRecord]) -> Check:
    """Every driver ran its own Ray: none joined another's (a Ray left over
    by a killed driver, the baseline's, or a test session's)."""
    addresses = [d.gcs_address for d in drives]
    started = [a for a in addresses if a is not None]
    passed = len(set(started)) == len(started)
    return Check("every driver started a Ray of its own", passed, [f"GCS: {addresses}"])


def check_no_survivors(drives: Sequence[DriveRecord]) -> Check:
    """No process of a driver's session is left (those that outlived the
    driver died by themselves, or `reap_session` killed them)."""
    details = [
        f"{drive.log.name}: still alive: {[(p.pid, p.command) for p in left]}"
        for drive in drives
        if (left := alive(session_processes(drive.session)))
    ]
    return Check("no process of a driver's session survived", not details, details or ["none"])


def checkpoint_problems(directory: Path) -> list[str]:
    """What is wrong with a saved checkpoint directory: its files (see
    `content_problems`), and its metadata, which must name the iteration
    its state.json and its name (checkpoint_NNNNNN) say."""
    iteration, problems = content_problems(directory)
    try:
        meta = read_meta(str(directory))
    except (OSError, ValueError) as error:
        return [*problems, f"{META_FILE}: {error}"]
    if meta is None:
        problems.append(f"{META_FILE} is missing")
    elif meta.training_iteration != iteration:
        problems.append(f"{META_FILE} says iteration {meta.training_iteration}")
    name = dirname_generation(directory.name)[0]  # `_g2`: a take-over's, on an object store
    if iteration is not None and name != f"{CHECKPOINT_PREFIX}{iteration:06d}":
        problems.append(f"it holds iteration {iteration}")
    return problems


def save_order(name: str) -> tuple[str, int]:
    """A checkpoint directory's name as it sorts among a trial's saves:
    the driver's name, then the lease generation whose worker stored it
    (`checkpoint_000004` before `checkpoint_000004_g2`)."""
    return dirname_generation(name)


def check_checkpoints(experiment_dir: Path) -> Check:
    """(d): the results (`ResultGrid.from_path`, as a user reads them) name,
    for every trial, a newest checkpoint and its kept ones, and each is
    whole: every file complete, of the iteration its name and metadata
    say. And no checkpoint directory older than a trial's newest named one
    is left unnamed: a kill between retention's decision and its delete
    leaves one, which the next resume deletes
    (`drop_unrecorded_checkpoints`). A newer one, a save copied but never
    logged that the trial did not save again, stays (reported, not failed:
    a resume cannot tell it from what `replay --truncate` cut away)."""
    details: list[str] = []
    passed = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grid = ResultGrid.from_path(experiment_dir)
    for warning in caught:
        passed = False
        details.append(f"<-- warning: {warning.message}")
    named: set[Path] = set()
    for result in grid:
        if result.checkpoint is None:
            passed = False
            details.append(f"{result.trial_id}: no checkpoint  <--")
            continue
        paths = [Path(result.checkpoint.path), *(Path(c.path) for c, _ in result.best_checkpoints)]
        named.update(paths)
        line = f"{result.trial_id}: {', '.join(sorted({p.name for p in paths}))}"
        problems = [f"{p.name}: {x}" for p in sorted(set(paths)) for x in checkpoint_problems(p)]
        passed = passed and not problems
        details.append(line + (f"  <-- {problems}" if problems else ", whole"))
    left = sorted(checkpoint_dirs(experiment_dir) - named)
    for path in left:
        problems = checkpoint_problems(path)
        what = "whole" if not problems else f"not whole: {problems[:2]}"
        newest = max(
            (p for p in named if p.parent == path.parent),
            key=lambda p: save_order(p.name),
            default=None,
        )
        if newest is not None and save_order(path.name) < save_order(newest.name):
            details.append(f"left on disk, older than a named one: {short(path)} ({what})  <--")
            passed = False
        else:
            details.append(f"left on disk, a save never logged: {short(path)} ({what})")
    return Check(
        "(d) every checkpoint the results name is whole; none retention dropped is left",
        passed,
        details,
    )


def check_stored_checkpoints(experiment_dir: Path, store: Store) -> Check:
    """(d) for an experiment in storage: every checkpoint the log names
    for a trial (its newest and kept ones, from the replayed state) is in
    the storage and whole (downloaded, then checked as on disk); and no
    checkpoint directory older than a trial's newest named one is left
    in the storage (retention, or the resume after a killed driver,
    deleted it there). A newer one, uploaded but never logged, stays
    (reported, not failed), as on disk."""
    details: list[str] = []
    passed = True
    state = replay(experiment_dir, verify=False, keep_commands=False, quiet=True).state
    named: set[PurePosixPath] = set()
    with tempfile.TemporaryDirectory(prefix="chaos-checkpoints-") as scratch:
        for trial in ordered(state):
            roots = sorted(
                {PurePosixPath(checkpoint_root(c.path)[0]) for c in trial.checkpoints.persistent}
            )
            if not roots:
                passed = False
                details.append(f"{trial.trial_id}: no checkpoint  <--")
                continue
            named.update(roots)
            problems = []
            for rel in roots:
                local = Path(scratch, str(rel))
                try:
                    store.download_dir(str(rel), str(local))
                except FileNotFoundError:
                    problems.append(f"{rel.name}: not in {store.uri()}")
                    continue
                problems += [f"{rel.name}: {x}" for x in checkpoint_problems(local)]
            line = f"{trial.trial_id}: {', '.join(r.name for r in roots)}"
            passed = passed and not problems
            details.append(line + (f"  <-- {problems}" if problems else ", whole (in storage)"))
    for path in sorted(stored_checkpoint_dirs(store) - named):
        newest = max(
            (p for p in named if p.parent == path.parent),
            key=lambda p: save_order(p.name),
            default=None,
        )
        if newest is not None and save_order(path.name) < save_order(newest.name):
            details.append(f"left in storage, older than a named one: {short(path)}  <--")
            passed = False
        else:
            details.append(f"left in storage, a save never logged: {short(path)}")
    return Check(
        "(d) every checkpoint the log names is whole in storage; none retention dropped is left",
        passed,
        details,
    )


def check_lock(experiment_dir: Path, drives: Sequence[DriveRecord]) -> Check:
    """(e): every driver that logged anything held the experiment's lock
    (driver.lock named its pid at its first event), a killed driver's lock
    was taken over by the next, and the last driver released it. A driver
    resuming a finished experiment may have released the lock (emptied
    the file) by the time its first event is seen: that is said, not
    failed."""
    details: list[str] = []
    passed = True
    killed = {d.session for d in drives if d.kill_landed}
    for drive in drives:
        if drive.first_event is None:
            continue
        if drive.lock_holder is None and drive.done_before:
            details.append(
                f"{drive.log.name}: resumed a finished experiment, and had released "
                "the lock by its first event"
            )
        elif drive.lock_holder != drive.session:
            passed = False
            details.append(
                f"{drive.log.name}: driver.lock named pid {drive.lock_holder}, "
                f"not this driver's {drive.session}  <--"
            )
        elif drive.lock_before in killed:
            details.append(
                f"{drive.log.name}: took over the lock of pid {drive.lock_before} (SIGKILLed)"
            )
    holder = (
        (experiment_dir / LOCK_FILE).read_text() if (experiment_dir / LOCK_FILE).exists() else ""
    )
    if holder:
        passed = False
        details.append(f"driver.lock still names a holder after the last driver: {holder}  <--")
    else:
        details.append("released by the last driver")
    return Check(
        "(e) one driver at a time held the lock; a killed one's was taken over", passed, details
    )


def check_second_drivers(second: Sequence[DriveRecord]) -> Check:
    """(f): every second driver started while another ran the experiment
    was refused (exit `REFUSED`, the message naming the running driver's
    pid), or had found that driver ended; none ran beside it."""
    details: list[str] = []
    passed = True
    for drive in second:
        assert drive.against is not None
        if drive.refused:
            line = next(
                (x for x in drive.log.read_text(errors="replace").splitlines() if "refused" in x),
                "",
            )
            details.append(f"{drive.log.name}: {line[:200]}")
        elif not drive.first_running and drive.returncode == 0:
            details.append(f"{drive.log.name}: ran after pid {drive.against.session} had ended")
        else:
            passed = False
            tail = drive.log.read_text(errors="replace").splitlines()[-10:]
            details.append(
                f"{drive.log.name}: exit {drive.returncode} while pid {drive.against.session} "
                f"ran={drive.first_running}, not refused naming it  <--"
            )
            details += [f"  | {line}" for line in tail]
    return Check(
        "(f) a second driver is refused, naming the first", passed, details or ["none ran"]
    )


def run_checks(
    place: Place,
    drives: Sequence[DriveRecord],
    baseline: DriveRecord,
    second: Sequence[DriveRecord] | None = None,
) -> list[Check]:
    """Every check, on the experiments as the storage holds them (fetched
    from a URI); (f) only if second drivers ran."""
    experiment_dir = place.stored_state(CHAOS_NAME)
    baseline_dir = place.stored_state(BASELINE_NAME)
    checks = [
        check_drivers(drives, baseline),
        check_own_rays([*drives, baseline]),
        check_no_survivors([*drives, baseline]),
    ]
    if not (experiment_dir / "events.log").exists():
        return [*checks, Check("the experiment started", False, ["no events.log"])]
    checks += [check_trials_finished(experiment_dir), check_result_files(experiment_dir)]
    if baseline.returncode != 0:
        checks.append(Check("the baseline ran", False, [f"exit {baseline.returncode}"]))
    else:
        checks.append(check_best(experiment_dir, baseline_dir))
    if place.uri is None:
        checks.append(check_checkpoints(experiment_dir))
    else:
        checks.append(check_stored_checkpoints(experiment_dir, place.store(CHAOS_NAME)))
    last_workdir = drives[-1].workdir if drives else experiment_dir
    checks.append(check_lock(last_workdir, drives))
    if second is not None:
        checks.append(check_second_drivers(second))
    return checks


# -- the command line -------------------------------------------------------------------------


def phase_list(text: str) -> list[str]:
    """`--phases`: a comma-separated subset of `PHASES` and `STORAGE_PHASES`."""
    phases = [p.strip() for p in text.split(",") if p.strip()]
    known = PHASES + STORAGE_PHASES
    unknown = [p for p in phases if p not in known]
    if unknown or not phases:
        raise argparse.ArgumentTypeError(
            f"--phases={text!r}: expected a comma-separated list of {', '.join(known)}"
        )
    return phases


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("drive", help="run (or --resume) the experiment DIR_ROOT/NAME")
    one.add_argument("root", type=Path, metavar="DIR_ROOT")
    one.add_argument("name", metavar="NAME")
    one.add_argument("--resume", action="store_true")
    one.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the experiment's seed")
    one.add_argument("--notify-fd", type=int, help="a pipe told 'restore' and 'fit'")
    one.add_argument("--second", action="store_true", help="expect another driver: no Ray first")
    one.add_argument("--storage", metavar="URI", help="keep the experiment in URI/NAME")
    one.add_argument("--aim", help="kill this driver there: compaction:N, lease or fence")
    one.add_argument("--sync-period", type=float, help="seconds between shipments (storage)")
    loop = commands.add_parser("run", help="the chaos loop, the baseline and the checks")
    loop.add_argument("root", type=Path, metavar="DIR_ROOT")
    loop.add_argument("--kills", type=int, required=True)
    loop.add_argument("--seed", type=int, default=DEFAULT_SEED)
    loop.add_argument("--max-delay", type=float, default=3.0, help="seconds after the first event")
    loop.add_argument("--timeout", type=float, default=RUN_TIMEOUT_S, help="for the last driver")
    loop.add_argument(
        "--phases",
        type=phase_list,
        default=["normal"],
        help=f"what the kills aim at, in turn: a comma-separated subset of {','.join(PHASES)}",
    )
    loop.add_argument(
        "--second-drivers",
        action="store_true",
        help="start a second driver against every normal round's driver and the last one",
    )
    loop.add_argument(
        "--checkpoint-window",
        type=float,
        default=CHECKPOINT_WINDOW_S,
        help="seconds after a new checkpoint directory appears",
    )
    loop.add_argument(
        "--storage",
        metavar="URI",
        help=f"keep the experiments in storage (a URI, or {S3_LOCAL}: a local S3 server); "
        "each driver works in a fresh staging directory and resumes from the URI alone",
    )
    loop.add_argument(
        "--sync-period",
        type=float,
        help="with --storage: seconds between shipments (0.1 lets compaction kills land)",
    )
    loop.add_argument(
        "--same-staging",
        action="store_true",
        help="with --storage: one staging directory for every driver (the same machine)",
    )
    args = parser.parse_args(argv)
    if args.command == "drive":
        return drive(
            args.root.resolve(),
            args.name,
            resume=args.resume,
            seed=args.seed,
            notify_fd=args.notify_fd,
            second=args.second,
            storage=args.storage,
            aim=args.aim,
            sync_period=args.sync_period,
        )
    report = run_chaos(
        args.root.resolve(),
        kills=args.kills,
        seed=args.seed,
        max_delay=args.max_delay,
        timeout=args.timeout,
        phases=args.phases,
        second_drivers=args.second_drivers,
        checkpoint_window=args.checkpoint_window,
        storage=args.storage,
        same_staging=args.same_staging,
        sync_period=args.sync_period,
    )
    text = report.render()
    (args.root / "report.txt").write_text(text + "\n")
    print(text)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
