"""What keeping an experiment in storage costs, tunecore against Ray Tune,
side by side in one run (issue 11).

Workload: N trials (100 and 1,000; 20 with `--quick`) x 10 results each, one
small checkpoint (4 KiB) per trial with its last result, 1 CPU per trial on
`ray.init(num_cpus=2)`. Each (size, storage, framework) runs in its own
child interpreter, as in `benchmarks.vs_ray_tune`; Ray Tune runs with
`reuse_actors=True` (its best setting here), tunecore with its defaults.

Storages, with the same `RunConfig(storage_path=..., storage_filesystem=...)`
for both frameworks:

- `local`: a plain local directory: the baseline, nothing is synced;
- `file`: a `file://` URI on another local directory;
- `s3`: moto's S3 server on 127.0.0.1 (run by this parent process), reached
  through `pyarrow.fs.S3FileSystem(endpoint_override=...)`, a fresh bucket
  per run; `s3-delayed-open` (only when asked for) the same with
  `allow_delayed_open=True`, which writes a small object in one PUT.

What is measured, and where, so that no number comes from a framework's
own word where the outside can see it:

- wall: from building the Tuner to the return of `fit()`, in the child;
  "overhead" is wall minus the same framework's wall on `local`.
- driver CPU: the CPU time of the driver process (all its threads, the
  syncing ones included) during `fit()`: syncing's cost where no server
  latency hides it.
- requests and bytes uploaded: counted at the S3 server itself (a WSGI
  layer around moto's application, per bucket): objects written (single
  PUTs, completed multipart uploads, server-side copies), the body bytes of
  PUTs and parts, and every request of any kind, each divided by the
  results reported. The `file` rows have no server: only what is stored
  at the end is shown (and tunecore's own `ShipStats`, in the notes).
- stored: objects and bytes under the storage root when the run is over.
- sync busy: seconds the framework's experiment-state uploader spent
  uploading, in the driver (tunecore: `ShipStats.seconds` of its
  StateShipper; Ray Tune: the time inside `_upload_to_fs_path` calls made by
  the driver, which is how its background syncer copies the staging dir).
  Workers' checkpoint uploads are in the wall time of both, not here.
- driver blocked: time the driver's loop waited on experiment-state syncing
  (tunecore: the final `StateShipper.close()`; Ray Tune: every
  `sync_up_experiment_state` call, which serialises the experiment state and
  waits for the upload when forced); "final flush" is the last of those.
- lag: for every result, the time from its report (a `time.time()` taken by
  the trainable, in the metrics) to the first poll of the storage (every
  0.5 s, read in-process from moto's backend or the directory: no request
  is counted) that shows it, either in a `result.json` or (tunecore) in the
  event log shipped so far. Median and maximum over all results; a result
  first visible only after `fit()` returned counts up to `fit()`'s return.
- S3 server CPU: this process's CPU time during the run, less the
  polling's: what moto spent serving the run. It runs on the same 2 cores
  as the run, so it slows the run down, which a real S3 would not (it
  would cost latency instead); read the S3 overheads with that in mind.
- complete: after the run, every result of every trial is in the stored
  `result.json` files and every trial has a checkpoint in storage.

Run with `python -m benchmarks.storage_sync [--quick] [--trials 100,1000]
[--storages local,file,s3] [--json PATH]`; Ray Tune, pyarrow and moto must be
installed (`nox -s bench` does).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.metadata
import json
import logging
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.children import emit, preload_ray_serializers, preload_tunecore, run_child
from benchmarks.scratch import run_dir

RAY_TUNE = "ray_tune"
TUNECORE = "tunecore"
FRAMEWORKS = (RAY_TUNE, TUNECORE)
STORAGES = ("local", "file", "s3")
S3_DELAYED = "s3-delayed-open"  # on request only: S3 through a single PUT per small object
RESULTS_PER_TRIAL = 10
CHECKPOINT_BYTES = 4096
EXPERIMENT = "bench"
PREFIX = "runs"  # the storage root inside a bucket or directory
NUM_CPUS = 2
POLL_S = 0.5
CHILD_TIMEOUT_S = 3600.0
S3_KEY = "bench"
S3_REGION = "us-east-1"
TARGET_PERCENT = 5.0

Report = Callable[[dict[str, float], str | None], None]
Stored = dict[str, tuple[int, Callable[[], bytes]]]  # key -> (size, read its bytes)
ResultKey = tuple[int, int]  # (trial k, result i)


# -- the trainable: one logic, a thin wrapper per framework ------------------------------------


def train(config: Mapping[str, Any], report: Report) -> None:
    """10 results; the last one with a checkpoint of CHECKPOINT_BYTES. `t`
    is when the result was made, for the lag."""
    k = int(config["k"])
    for i in range(1, RESULTS_PER_TRIAL + 1):
        metrics = {"k": float(k), "i": float(i), "t": time.time()}
        if i < RESULTS_PER_TRIAL:
            report(metrics, None)
            continue
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "model.bin").write_bytes(bytes([k % 256]) * CHECKPOINT_BYTES)
            report(metrics, directory)


def ray_tune_report(metrics: dict[str, float], checkpoint: str | None) -> None:
    from ray import tune  # noqa: PLC0415 - only Ray Tune's workers import Ray Tune

    saved = tune.Checkpoint.from_directory(checkpoint) if checkpoint else None
    tune.report(metrics, checkpoint=saved)


def tunecore_report(metrics: dict[str, float], checkpoint: str | None) -> None:
    import tunecore  # noqa: PLC0415 - the same lookup as Ray Tune's side

    saved = tunecore.Checkpoint.from_directory(checkpoint) if checkpoint else None
    tunecore.report(metrics, checkpoint=saved)


def ray_tune_trainable(config: dict[str, Any]) -> None:
    train(config, ray_tune_report)


def tunecore_trainable(config: dict[str, Any]) -> None:
    train(config, tunecore_report)


# -- the child: one experiment in a fresh interpreter ------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where one run keeps its experiment: a directory (`local`, `file`) or
    a bucket on the S3 endpoint (`s3`)."""

    storage: str
    directory: str = ""
    endpoint: str = ""
    bucket: str = ""


def s3_filesystem(endpoint: str, delayed_open: bool = False) -> Any:
    """The client a user would build. pyarrow's default writes every object,
    however small, as a multipart upload (3 requests); `allow_delayed_open`
    makes a small one a single PUT."""
    from pyarrow.fs import S3FileSystem  # noqa: PLC0415 - only the S3 rows need pyarrow

    return S3FileSystem(
        allow_delayed_open=delayed_open,
        endpoint_override=endpoint,
        scheme="http",
        access_key=S3_KEY,
        secret_key=S3_KEY,
        region=S3_REGION,
        allow_bucket_creation=True,
    )


def storage_args(framework: str, target: Target) -> tuple[str, Any]:
    """(storage_path, storage_filesystem) for the framework: the same
    storage for both. Ray Tune wants a custom filesystem's path without its
    scheme; tunecore takes either and gets the URI a user would write."""
    if target.storage == "local":
        return target.directory, None
    if target.storage == "file":
        return f"file://{target.directory}", None
    path = f"{target.bucket}/{PREFIX}"
    filesystem = s3_filesystem(target.endpoint, target.storage == S3_DELAYED)
    return (path if framework == RAY_TUNE else f"s3://{path}"), filesystem


TIMINGS: dict[str, Any] = {"sync_s": 0.0, "blocked_s": 0.0, "final_flush_s": 0.0}
"""Seconds the framework's own syncing code took in this process (the
driver), gathered by wrapping that code. A plain dict and no lock: Ray
pickles what holds the wrappers; each key has one writing thread."""


def timed(key: str, function: Callable[..., Any], last: str = "") -> Callable[..., Any]:
    """`function`, adding its duration to `TIMINGS[key]` (and setting
    `TIMINGS[last]` to it)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            seconds = time.perf_counter() - start
            TIMINGS[key] += seconds
            if last:
                TIMINGS[last] = seconds

    return wrapper


def instrument_ray_tune() -> None:
    from ray.train._internal import storage  # noqa: PLC0415
    from ray.tune.execution import experiment_state  # noqa: PLC0415

    # The syncer looks `_upload_to_fs_path` up when it builds each sync command.
    storage._upload_to_fs_path = timed("sync_s", storage._upload_to_fs_path)
    manager = experiment_state._ExperimentCheckpointManager
    sync_up = timed("blocked_s", manager.sync_up_experiment_state, "final_flush_s")
    setattr(manager, "sync_up_experiment_state", sync_up)  # noqa: B010


def instrument_tunecore() -> None:
    """Keep the StateShipper's own statistics when it closes (the end of
    `fit()`), and time that final flush. Absent (no shipper yet), say so."""
    try:
        from tunecore.shell.mirror import shipper  # noqa: PLC0415
    except ImportError as error:
        TIMINGS["note"] = f"no StateShipper: {error}"
        return
    import msgspec  # noqa: PLC0415

    close = shipper.StateShipper.close

    def recording_close(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return close(self, *args, **kwargs)
        finally:
            seconds = time.perf_counter() - start
            stats = msgspec.to_builtins(self.stats)
            TIMINGS.update(final_flush_s=seconds, ship_stats=stats)
            TIMINGS["blocked_s"] += seconds
            TIMINGS["sync_s"] += float(stats.get("seconds", 0.0))

    setattr(shipper.StateShipper, "close", recording_close)  # noqa: B010


def run_ray_tune(trials: int, target: Target) -> tuple[float, int, list[str]]:
    """(seconds, trials, the failed trials' errors) for Ray Tune."""
    from ray import tune  # noqa: PLC0415 - Ray Tune is only installed in the bench session

    storage_path, filesystem = storage_args(RAY_TUNE, target)
    start = time.perf_counter()
    tuner = tune.Tuner(
        ray_tune_trainable,
        param_space={"k": tune.grid_search(list(range(trials)))},
        tune_config=tune.TuneConfig(reuse_actors=True),
        run_config=tune.RunConfig(
            name=EXPERIMENT, storage_path=storage_path, storage_filesystem=filesystem, verbose=0
        ),
    )
    grid = tuner.fit()
    return time.perf_counter() - start, len(grid), [str(error) for error in grid.errors]


def run_tunecore(trials: int, target: Target) -> tuple[float, int, list[str]]:
    """(seconds, trials, the failed trials' errors) for tunecore."""
    import tunecore  # noqa: PLC0415 - imported before the clock, like Ray Tune

    preload_tunecore()
    storage_path, filesystem = storage_args(TUNECORE, target)
    start = time.perf_counter()
    tuner = tunecore.Tuner(
        tunecore_trainable,
        param_space={"k": tunecore.grid_search(list(range(trials)))},
        run_config=tunecore.RunConfig(
            name=EXPERIMENT, storage_path=storage_path, storage_filesystem=filesystem, verbose=0
        ),
    )
    grid = tuner.fit()
    return time.perf_counter() - start, len(grid), [str(error) for error in grid.errors]


def child(framework: str, trials: int, target: Target) -> None:
    """Run one experiment and print its measurements as one JSON line."""
    out: dict[str, Any] = {"framework": framework, "trials": trials, "storage": target.storage}
    try:  # imports before the clock and before ray.init, for both frameworks
        if framework == RAY_TUNE:
            import ray.tune  # noqa: PLC0415

            instrument_ray_tune()
        else:
            import tunecore.shell.executors.ray  # noqa: F401, PLC0415

            instrument_tunecore()
    except ImportError as error:
        emit({**out, "unavailable": f"cannot import: {error}"})
        return
    import ray  # noqa: PLC0415

    preload_ray_serializers()
    ray.init(num_cpus=NUM_CPUS, include_dashboard=False)
    out["fit_start"] = time.time()
    cpu = time.process_time()
    run = run_ray_tune if framework == RAY_TUNE else run_tunecore
    seconds, count, errors = run(trials, target)
    out["fit_end"] = time.time()
    out["driver_cpu_s"] = time.process_time() - cpu
    ray.shutdown()
    out.update(seconds=seconds, trial_count=count, errors=len(errors), **TIMINGS)
    out["first_errors"] = errors[:3]
    emit(out)


# -- the parent: the S3 server, what reaches storage, and when ---------------------------------


class CountingApp:
    """A WSGI layer around moto's application counting every request per
    bucket (path-style addressing, as pyarrow uses with an endpoint), and
    the body bytes of uploads."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app
        self._lock = threading.Lock()
        self.counts: dict[str, Counter[str]] = {}

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        bucket, _, key = str(environ.get("PATH_INFO", "")).lstrip("/").partition("/")
        method = str(environ.get("REQUEST_METHOD", ""))
        kind = request_kind(method, key, str(environ.get("QUERY_STRING", "")), environ)
        length = environ.get("HTTP_X_AMZ_DECODED_CONTENT_LENGTH") or environ.get("CONTENT_LENGTH")
        with self._lock:
            counts = self.counts.setdefault(bucket, Counter())
            counts[kind] += 1
            counts["requests"] += 1
            if kind in ("put", "put_part"):
                counts["put_bytes"] += int(length or 0)
        return self.app(environ, start_response)

    def snapshot(self, bucket: str) -> dict[str, int]:
        with self._lock:
            return dict(self.counts.get(bucket, Counter()))


def request_kind(method: str, key: str, query: str, environ: Mapping[str, Any]) -> str:
    """What an S3 request does, from its method, key and query."""
    if method == "PUT" and key:
        if "HTTP_X_AMZ_COPY_SOURCE" in environ:
            return "copy"
        return "put_part" if "partNumber=" in query else "put"
    if method == "POST":
        if "delete" in query:
            return "delete"
        if "uploadId=" in query:
            return "multipart_done"  # an object made of its parts
        return "multipart_start" if "uploads" in query else "post"
    if method == "DELETE":
        return "delete"
    if method == "GET":
        return "get" if key else "list"
    return method.lower() or "other"


class S3Server:
    """moto's S3 server on 127.0.0.1 in this process (like
    `moto.server.ThreadedMotoServer`, with a `CountingApp` in front), so the
    children's requests are counted here and the stored objects can be read
    without a request."""

    def __init__(self) -> None:
        from moto.moto_server.werkzeug_app import (  # noqa: PLC0415
            DomainDispatcherApplication,
            MotoRequestHandler,
            create_backend_app,
        )
        from werkzeug.serving import make_server  # noqa: PLC0415

        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        self.app = CountingApp(DomainDispatcherApplication(create_backend_app))
        self._server = make_server(
            "127.0.0.1", 0, self.app, threaded=True, request_handler=MotoRequestHandler
        )
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        host, port = self._server.server_address[:2]
        self.endpoint = f"{host!s}:{port}"

    def create_bucket(self) -> str:
        name = f"bench-{uuid.uuid4().hex[:12]}"
        s3_filesystem(self.endpoint).create_dir(name)
        return name

    def objects(self, bucket: str) -> Stored:
        """The bucket's objects, read from moto's backend (no request)."""
        from moto.core.models import DEFAULT_ACCOUNT_ID  # noqa: PLC0415
        from moto.s3.models import s3_backends  # noqa: PLC0415

        keys = s3_backends[DEFAULT_ACCOUNT_ID]["global"].buckets[bucket].keys
        return {
            key: (int(fake.size), functools.partial(_value, fake))
            for key, fake in keys.items()
            if fake is not None
        }

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join()


def _value(fake: Any) -> bytes:
    """The bytes of a moto `FakeKey`."""
    return bytes(fake.value)


def directory_objects(root: str) -> Stored:
    """The files under `root`, by '/'-joined relative path."""
    found: Stored = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with contextlib.suppress(FileNotFoundError):
                found[rel] = (os.path.getsize(path), Path(path).read_bytes)
    return found


@dataclass
class Observer:
    """Polls a storage root and records when each result first shows up
    there: in a stored `result.json`, or in tunecore's shipped event log."""

    objects: Callable[[], Stored]
    first_seen: dict[ResultKey, float] = field(default_factory=dict)
    made: dict[ResultKey, float] = field(default_factory=dict)  # when each result was reported
    _sizes: dict[str, int] = field(default_factory=dict)
    _log_dir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="bench-log-"))
    cpu_s: float = 0.0  # this process's CPU spent polling (not the server's)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._timed_poll()  # the final state, after the run
        shutil.rmtree(self._log_dir, ignore_errors=True)

    def _loop(self) -> None:
        while not self._stop.wait(POLL_S):
            with contextlib.suppress(Exception):  # a file or key vanishing mid-read
                self._timed_poll()

    def _timed_poll(self) -> None:
        start = time.thread_time()
        try:
            self.poll()
        finally:
            self.cpu_s += time.thread_time() - start

    def poll(self) -> None:
        now = time.time()
        objects = self.objects()
        seen: dict[ResultKey, float] = {}
        for key, (size, read) in objects.items():
            if key.endswith("result.json") and self._sizes.get(key) != size:
                data = read()
                self._sizes[key] = size
                for line in data.splitlines():
                    metrics = json.loads(line) if line.strip() else {}
                    if "k" in metrics and "i" in metrics:
                        result = (int(metrics["k"]), int(metrics["i"]))
                        seen[result] = now
                        self.made[result] = float(metrics["t"])
        for result in self._logged_results(objects):
            seen.setdefault(result, now)
        for result, when in seen.items():
            self.first_seen.setdefault(result, when)

    def _logged_results(self, objects: Stored) -> Iterator[ResultKey]:
        """The results in the event log tunecore has shipped so far (its
        `events/` segments, read with tunecore's own reader)."""
        segments = {k: read for k, (_, read) in objects.items() if "/events/" in f"/{k}"}
        if not segments:
            return
        from tunecore.model.events import ResultReported  # noqa: PLC0415
        from tunecore.shell.eventlog import read_log  # noqa: PLC0415
        from tunecore.shell.mirror.stored_state import stored_log  # noqa: PLC0415
        from tunecore.shell.storage.local_store import LocalStore  # noqa: PLC0415

        events_dir = os.path.join(self._log_dir, "store", "events")
        os.makedirs(events_dir, exist_ok=True)
        for key, read in segments.items():
            path = os.path.join(events_dir, key.rpartition("/")[2])
            if not os.path.exists(path):
                Path(path).write_bytes(read())
        local = set(os.listdir(events_dir))
        for name in local - {k.rpartition("/")[2] for k in segments}:
            os.unlink(os.path.join(events_dir, name))  # compacted away in storage
        data = stored_log(LocalStore(os.path.join(self._log_dir, "store")))
        Path(self._log_dir, "events.log").write_bytes(data)
        for event in read_log(self._log_dir, quiet=True).events:
            if isinstance(event, ResultReported):
                k, i = event.result.get("k"), event.result.get("i")
                if isinstance(k, float) and isinstance(i, float):
                    yield (int(k), int(i))


def stored_totals(objects: Stored) -> tuple[int, int]:
    return len(objects), sum(size for size, _ in objects.values())


def checkpointed_trials(objects: Iterable[str]) -> int:
    """How many trial directories hold a checkpoint file in storage."""
    trials = set()
    for key in objects:
        parts = key.split("/")
        for index, part in enumerate(parts[:-1]):
            if part.startswith("checkpoint_") and parts[-1] == "model.bin":
                trials.add("/".join(parts[:index]))
    return len(trials)


@dataclass(frozen=True)
class Measured:
    """One child's outcome: its measurements, or why it has none."""

    data: dict[str, Any]
    problem: str | None = None
    unavailable: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None and self.unavailable is None


def spawn(framework: str, trials: int, target: Target) -> tuple[Measured, str, str]:
    """Run one child; (its outcome, its stdout, its stderr)."""
    command = ["--child", framework, str(trials), json.dumps(target.__dict__)]
    child = run_child("benchmarks.storage_sync", command, CHILD_TIMEOUT_S, tail_lines=25)
    if child.data is None:
        return Measured({}, problem=child.problem), child.stdout, ""
    data = child.data
    if "unavailable" in data:
        return Measured(data, unavailable=str(data["unavailable"])), child.stdout, child.stderr
    return Measured(data), child.stdout, child.stderr


def measure(framework: str, trials: int, storage: str, server: S3Server | None) -> Measured:
    """One run with its storage prepared, watched and checked."""
    scratch = run_dir(f"bench-storage-{framework}-")
    if server is not None and storage.startswith("s3"):
        target = Target(storage, endpoint=server.endpoint, bucket=server.create_bucket())
        bucket = target.bucket

        def objects() -> Stored:
            return server.objects(bucket)
    else:
        target = Target(storage, directory=os.path.join(scratch, PREFIX))
        os.makedirs(target.directory)

        def objects() -> Stored:
            return directory_objects(target.directory)

    observer = Observer(objects)
    if storage != "local":
        observer.start()
    cpu = time.process_time()
    measured, _stdout, _stderr = spawn(framework, trials, target)
    observer.stop()
    # What this process spent besides polling: serving the child's requests.
    server_cpu = time.process_time() - cpu - observer.cpu_s
    if not measured.ok:
        return measured
    data = dict(measured.data)
    stored = objects()
    data["stored_objects"], data["stored_bytes"] = stored_totals(stored)
    data["checkpointed_trials"] = checkpointed_trials(stored)
    if server is not None and storage.startswith("s3"):
        data["s3"] = server.app.snapshot(target.bucket)
        data["s3_server_cpu_s"] = server_cpu
    data.update(lag(observer, float(data["fit_end"])) if storage != "local" else {})
    return Measured(data, problem=check(trials, data, observer))


def lag(observer: Observer, fit_end: float) -> dict[str, float]:
    """Median and maximum seconds from a result's report to its first
    sighting in storage (capped at `fit()`'s return)."""
    lags = [
        max(0.0, min(observer.first_seen.get(r, fit_end), fit_end) - made)
        for r, made in observer.made.items()
    ]
    if not lags:
        return {}
    return {"lag_median_s": statistics.median(lags), "lag_max_s": max(lags)}


def check(trials: int, data: Mapping[str, Any], observer: Observer) -> str | None:
    """What is wrong with a run that claims to have finished, if anything."""
    if data["errors"]:
        first = "\n".join(data["first_errors"][:1])
        return f"{data['errors']} trials failed; the first:\n{first}"
    if data["trial_count"] != trials:
        return f"{data['trial_count']} trials, expected {trials}"
    expected = {(k, i) for k in range(trials) for i in range(1, RESULTS_PER_TRIAL + 1)}
    missing = expected - set(observer.made)
    if missing:
        return f"{len(missing)} of {len(expected)} results not in storage's result.json files"
    if data["checkpointed_trials"] != trials:
        return f"{data['checkpointed_trials']} of {trials} trials have a checkpoint in storage"
    return None


# -- the report --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    trials: int
    storage: str
    framework: str
    measured: Measured


def machine_line() -> str:
    def version(name: str) -> str:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return "absent"

    return (
        f"{os.cpu_count()} cores ({NUM_CPUS} given to Ray), Python "
        f"{platform.python_version()}, Ray {version('ray')}, tunecore {version('tunecore')}, "
        f"pyarrow {version('pyarrow')}, moto {version('moto')}, {platform.machine()} "
        f"{platform.node()}"
    )


def run(
    trial_counts: Sequence[int], storages: Sequence[str], frameworks: Sequence[str] = FRAMEWORKS
) -> tuple[str, bool, list[Row]]:
    """Run the comparison; (the Markdown report, whether every run passed its checks, rows)."""
    server = S3Server() if any(s.startswith("s3") for s in storages) else None
    rows: list[Row] = []
    try:
        for trials in trial_counts:
            for storage in storages:
                for framework in frameworks:
                    progress(f"{trials} trials, {storage}, {framework} ...")
                    rows.append(
                        Row(trials, storage, framework, measure(framework, trials, storage, server))
                    )
    finally:
        if server is not None:
            server.stop()
    table, ok = report(rows)
    return table, ok, rows


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def report(rows: Sequence[Row]) -> tuple[str, bool]:
    lines = [
        "### Storage syncing, tunecore against Ray Tune, side by side",
        "",
        machine_line(),
        "",
        f"Each trial: {RESULTS_PER_TRIAL} results, 1 checkpoint of {CHECKPOINT_BYTES // 1024} KiB.",
        "",
        "| trials | storage | framework | wall s | overhead vs local | driver CPU s | "
        "objects written / result | "
        "KB up / result | requests / result | stored objects | stored MB | sync busy s | "
        "sync % of wall | driver blocked s | final flush s | lag median / max s | "
        "S3 server CPU s |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    walls = {
        (r.trials, r.framework): float(r.measured.data["seconds"])
        for r in rows
        if r.storage == "local" and r.measured.ok
    }
    ok = True
    notes: list[str] = []
    for row in rows:
        m = row.measured
        name = "Ray Tune" if row.framework == RAY_TUNE else "tunecore"
        head = f"| {row.trials:,} | {row.storage} | {name} | "
        if not m.ok:
            ok = ok and m.unavailable is not None
            why = m.unavailable or "FAILED"
            lines.append(head + f"{why} |" + " - |" * 13)
            if m.problem:
                notes.append(f"- {row.trials} trials, {row.storage}, {name}: {m.problem}")
            continue
        d = m.data
        wall = float(d["seconds"])
        results = row.trials * RESULTS_PER_TRIAL
        base = walls.get((row.trials, row.framework))
        overhead = (
            f"{wall - base:+.1f} s ({(wall - base) / base * 100:+.0f} %)"
            if base is not None and row.storage != "local"
            else "-"
        )
        s3: dict[str, int] = d.get("s3", {})
        written = s3.get("put", 0) + s3.get("multipart_done", 0) + s3.get("copy", 0)
        per = (
            [
                f"{written / results:.2f}",
                f"{s3.get('put_bytes', 0) / results / 1024:.2f}",
                f"{s3.get('requests', 0) / results:.2f}",
            ]
            if s3
            else ["-", "-", "-"]
        )
        sync = float(d.get("sync_s", 0.0))
        synced = row.storage != "local"
        lag_cell = f"{d['lag_median_s']:.1f} / {d['lag_max_s']:.1f}" if "lag_median_s" in d else "-"
        cells = [
            f"{wall:.1f}",
            overhead,
            f"{float(d['driver_cpu_s']):.1f}",
            *per,
            f"{d['stored_objects']:,}",
            f"{d['stored_bytes'] / 1e6:.2f}",
            f"{sync:.2f}" if synced else "-",
            f"{sync / wall * 100:.1f}" if synced else "-",
            f"{float(d.get('blocked_s', 0.0)):.2f}" if synced else "-",
            f"{float(d.get('final_flush_s', 0.0)):.2f}" if synced else "-",
            lag_cell,
            f"{d['s3_server_cpu_s']:.1f}" if "s3_server_cpu_s" in d else "-",
        ]
        lines.append(head + " | ".join(cells) + " |")
        if row.framework == TUNECORE and synced:
            if "ship_stats" not in d:
                notes.append(
                    f"- {row.trials} trials, {row.storage}, tunecore: no ShipStats "
                    f"({d.get('note', 'the StateShipper never closed')})"
                )
            else:
                ship = d["ship_stats"]
                notes.append(
                    f"- {row.trials:,} trials, {row.storage}, tunecore ShipStats: "
                    f"{ship['objects']:,} objects, {ship['bytes'] / 1e3:,.0f} kB "
                    f"({ship['log_bytes'] / 1e3:,.0f} kB of log, "
                    f"{ship['compacted_bytes'] / 1e3:,.0f} kB compacted), "
                    f"{ship['deletes']} deletes, {ship['failures']} failures"
                )
            if row.trials >= 1000 and "ship_stats" in d:
                verdict = "met" if sync / wall * 100 < TARGET_PERCENT else "NOT met"
                notes.append(
                    f"- {row.trials:,} trials, {row.storage}, tunecore: sync busy "
                    f"{sync / wall * 100:.1f} % of wall, target < {TARGET_PERCENT:g} % {verdict}"
                )
    lines += ["", *notes]
    lines += [
        "",
        "Objects written (PUTs, completed multipart uploads, copies), bytes (bodies of PUTs and",
        "parts) and requests (of any kind) are counted at the S3 server, per result reported.",
        "Sync busy is the driver's experiment-state uploader (tunecore: ShipStats.seconds; Ray",
        "Tune: its syncer's _upload_to_fs_path calls); workers' checkpoint uploads are in the",
        "wall time only.",
        "Driver blocked: tunecore's final StateShipper.close(); Ray Tune's",
        "sync_up_experiment_state calls (serialising the state, waiting when forced). Lag: report",
        f"to first sighting in storage (polled every {POLL_S} s, in result.json or tunecore's",
        "shipped log). S3 server CPU: what moto, in the benchmark's process on the same cores,",
        "spent serving the run (a real S3 costs the run latency, not local CPU). Ray Tune",
        "reuse_actors=True; tunecore with its defaults.",
    ]
    return "\n".join(lines), ok


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.storage_sync", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20 trials only, a smoke run")
    parser.add_argument("--trials", default="100,1000", help="trial counts, e.g. 100,1000")
    parser.add_argument("--storages", default=",".join(STORAGES), help="e.g. local,s3")
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS), help="e.g. tunecore")
    parser.add_argument("--json", default="storage_sync.json", help="where to write the rows")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        framework, trials, target = args.child
        child(framework, int(trials), Target(**json.loads(target)))
        return 0
    counts = [20] if args.quick else [int(n) for n in args.trials.split(",") if n.strip()]
    storages = [s.strip() for s in args.storages.split(",") if s.strip()]
    frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    if bad := sorted(set(storages) - {*STORAGES, S3_DELAYED}):
        parser.error(f"--storages: unknown {bad}; choose from {', '.join(STORAGES)}, {S3_DELAYED}")
    if bad := sorted(set(frameworks) - set(FRAMEWORKS)):
        parser.error(f"--frameworks: unknown {bad}; choose from {', '.join(FRAMEWORKS)}")
    table, ok, rows = run(counts, storages, frameworks)
    print(table)
    Path(args.json).write_text(
        json.dumps(
            {
                "machine": machine_line(),
                "rows": [
                    {
                        "trials": r.trials,
                        "storage": r.storage,
                        "framework": r.framework,
                        "problem": r.measured.problem,
                        "unavailable": r.measured.unavailable,
                        **r.measured.data,
                    }
                    for r in rows
                ],
            },
            indent=2,
        )
    )
    progress(f"rows written to {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
