"""The chaos test for resume: SIGKILL the driver at random moments, resume,
and check that nothing was lost, repeated or decided differently.

    python scripts/chaos.py drive DIR_ROOT NAME [--resume] [--seed S]
    python scripts/chaos.py run DIR_ROOT --kills N --seed S

`drive` runs one deterministic experiment on a local Ray (or, with
`--resume`, continues it with `Tuner.restore`). `run` is the chaos loop: it
starts `drive` in a subprocess of its own session, waits a random (seeded)
moment after the driver's log shows it is under way, SIGKILLs the driver's
whole process group, checks that no process of that session survives (and
kills and reports any that do), resumes, and repeats `--kills` times; a last
resume runs to the end. Meanwhile an uninterrupted `drive` of the same
experiment with the same seed runs as the baseline. Then the checks:

(a) every trial ended TERMINATED, and did so exactly once in the event log;
    the log replays and matches the snapshots the live runs took;
(b) each trial's result.json (and progress.csv) holds training_iteration
    1..n exactly once each, n being the trial's last iteration, with the
    values a pure function of the config and the iteration gives (so every
    resume restarted from the checkpoint the counters say it did), and one
    row with done=true, the last (every trial here ends on an ASHA stop; a
    function that returns ends on its unlogged repeat instead);
(c) the best trial (loss and config) is the baseline's.

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
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.core.experiment import ExperimentState, step
from tunecore.core.experiment.snapshot import decode_state
from tunecore.model import JsonValue, Rejection, ResultReported, TrialState, TrialStatus
from tunecore.schedulers import ASHAScheduler
from tunecore.shell.eventlog import LogError, read_log
from tunecore.shell.replay import replay
from tunecore.shell.storage import PROGRESS_FILE, RESULT_FILE, ExperimentStorage

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


def train(config: dict[str, JsonValue]) -> None:
    """The trainable: resumes from its checkpoint (the iteration it reached,
    as JSON), sleeps as its work, reports the loss with a checkpoint every
    iteration.

    The checkpoint directory is temporary: tunecore saves it (copies it into
    the trial's checkpoint_NNNNNN/) while this function is parked in
    `report`, before the next iteration starts."""
    start = 0
    restored = tunecore.get_checkpoint()
    if restored is not None:
        with restored.as_directory() as directory:
            start = int(json.loads((Path(directory) / STATE_FILE).read_text())["iteration"])
    trial_dir = tunecore.get_context().trial_dir
    for iteration in range(start + 1, ITERATIONS + 1):
        time.sleep(SECONDS_PER_ITERATION)
        # In the trial directory: a temporary directory a kill leaves behind
        # is then removed with the experiment, not left in /tmp.
        with tempfile.TemporaryDirectory(prefix="user_state_", dir=trial_dir) as directory:
            (Path(directory) / STATE_FILE).write_text(json.dumps({"iteration": iteration}))
            tunecore.report(
                {
                    METRIC: expected_loss(config, iteration),
                    "step": iteration,
                    "resumed_from": start,
                },
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def make_tuner(root: Path, name: str, seed: int) -> Tuner:
    """The experiment: 6 trials (a grid times one seeded random value) under
    ASHA, every event synced (`fsync_interval_ms=0`), the newest 2
    checkpoints kept (so retention deletes checkpoints while kills land)."""
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
        ),
    )


def drive(root: Path, name: str, *, resume: bool, seed: int) -> int:
    """Run (or continue) the experiment `root/name` on a Ray of its own.

    Ray is started here, not left to tunecore, to pin it: 2 CPUs, no
    dashboard, and always a new local cluster (the chaos loop removes
    RAY_ADDRESS from our environment). The GCS address is printed so the
    loop can check that no two drivers shared a Ray."""
    import ray  # noqa: PLC0415 - only the driver needs Ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    print(f"ray gcs address: {ray.get_runtime_context().gcs_address}", flush=True)
    try:
        if resume:
            tuner = Tuner.restore(
                root / name,
                trainable=train,
                resume_unfinished=True,
                resume_errored=False,
                restart_errored=False,
            )
        else:
            tuner = make_tuner(root, name, seed)
        results = tuner.fit()
    finally:
        ray.shutdown()
    statuses = [str(r.status) for r in results]
    print(f"finished: {statuses}, error: {results.experiment_error}", flush=True)
    ok = results.experiment_error is None and all(
        r.status is TrialStatus.TERMINATED for r in results
    )
    return 0 if ok else 1


# -- the chaos loop ---------------------------------------------------------------------------

POLL_S = 0.05
START_TIMEOUT_S = 180.0
"""How long a driver may take to log its first event (Ray's start included)."""
RUN_TIMEOUT_S = 300.0
"""How long the last driver may take to end by itself (then it is killed
and the checks report what the log holds)."""
LINGER_TIMEOUT_S = 5.0
"""How long the processes of a killed driver's session may take to die
(Ray's workers notice their raylet is gone) before they are killed."""
SCRIPT = Path(__file__).resolve()


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
    and what of its session outlived it."""

    name: str
    resume: bool
    log: Path
    session: int  # the driver's pid, which is its session's id
    started: float
    delay: float | None = None
    first_event: float | None = None
    killed: float | None = None
    ended: float | None = None
    returncode: int | None = None
    gcs_address: str | None = None
    lingering: list[SessionProcess] = field(default_factory=list)
    linger_seconds: float = 0.0
    force_killed: list[SessionProcess] = field(default_factory=list)

    @property
    def kill_landed(self) -> bool:
        """The kill hit a driver still running (not one that had finished)."""
        return self.killed is not None and self.returncode == -signal.SIGKILL

    def describe(self, origin: float) -> str:
        what = "resume" if self.resume else "start"
        head = f"{self.name} {what}: "
        if self.first_event is not None:
            head += f"first new event after {self.first_event - self.started:.1f} s; "
        if self.kill_landed:
            assert self.killed is not None
            head += f"SIGKILL at +{self.killed - origin:.1f} s ({self.delay:.2f} s after it)"
        else:
            assert self.ended is not None
            head += f"exit {self.returncode} after {self.ended - self.started:.1f} s"
            if self.killed is not None:
                head += " (it had finished before the kill)"
        if self.lingering:
            kinds = sorted({p.short for p in self.lingering})
            head += (
                f"; {len(self.lingering)} processes of its session outlived it "
                f"({', '.join(kinds)}), gone after {self.linger_seconds:.1f} s"
            )
        else:
            head += "; no process of its session outlived it"
        if self.force_killed:
            killed = ", ".join(f"{p.pid} {p.short}" for p in self.force_killed)
            head += f"; had to SIGKILL: {killed}"
        return head


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

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def kills_landed(self) -> int:
        return sum(1 for d in self.drives if d.kill_landed)

    def render(self) -> str:
        origin = min(d.started for d in [*self.drives, self.baseline])
        lines = [
            f"chaos: {self.kills} kills requested, {self.kills_landed} landed mid-run, "
            f"seed {self.seed}, in {self.root}"
        ]
        lines += [f"  {d.describe(origin)}" for d in [*self.drives, self.baseline]]
        for check in self.checks:
            lines.append(f"[{'PASS' if check.passed else 'FAIL'}] {check.name}")
            lines += [f"    {d}" for d in check.details]
        lines.append(f"{'PASSED' if self.passed else 'FAILED'} in {self.seconds:.1f} s")
        return "\n".join(lines)


def child_env() -> dict[str, str]:
    """Our environment without RAY_ADDRESS: a driver's `ray.init()` must
    start a Ray of its own (one we can kill), never join another."""
    return {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}


def start_drive(
    root: Path, name: str, *, resume: bool, seed: int, number: int
) -> tuple[subprocess.Popen[bytes], DriveRecord]:
    """Start `drive` as the leader of a new session (so its process group,
    and every process it starts, can be found and killed)."""
    logs = root / "drives"
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{number:02d}_{name}_{'resume' if resume else 'start'}.log"
    command = [sys.executable, str(SCRIPT), "drive", str(root), name, "--seed", str(seed)]
    if resume:
        command.append("--resume")
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=child_env(),
        )
    record = DriveRecord(name, resume, log, session=process.pid, started=time.monotonic())
    return process, record


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


def kill_drive(
    root: Path, name: str, *, resume: bool, seed: int, number: int, delay: float
) -> DriveRecord:
    """One round of chaos: start a driver, wait for its first new event,
    wait `delay` more, SIGKILL its process group, reap it and its session."""
    experiment_dir = root / name
    before = event_count(experiment_dir)
    process, record = start_drive(root, name, resume=resume, seed=seed, number=number)
    record.delay = delay
    try:
        if wait_for_new_events(process, experiment_dir, before, START_TIMEOUT_S):
            record.first_event = time.monotonic()
            # The random moment; the wait ends early if the driver ends.
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=delay)
        if process.poll() is None:
            record.killed = time.monotonic()
            os.killpg(process.pid, signal.SIGKILL)
    finally:
        end_drive(process, record)  # an error above: never leave a driver running
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
    reap_session(record)
    record.gcs_address = gcs_address(record.log)


def gcs_address(log: Path) -> str | None:
    prefix = "ray gcs address: "
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    return None


def run_chaos(
    root: Path, *, kills: int, seed: int, max_delay: float = 3.0, timeout: float = RUN_TIMEOUT_S
) -> ChaosReport:
    """The chaos loop and the checks; see the module docstring. The
    baseline runs at the same time as the chaos, in its own Ray: the 2
    trials a Ray runs at once mostly sleep, so they share the 2 CPUs."""
    began = time.monotonic()
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    baseline_process, baseline = start_drive(root, BASELINE_NAME, resume=False, seed=seed, number=0)
    drives: list[DriveRecord] = []
    try:
        for number in range(1, kills + 1):
            delay = rng.uniform(0.0, max_delay)
            record = kill_drive(
                root, CHAOS_NAME, resume=number > 1, seed=seed, number=number, delay=delay
            )
            drives.append(record)
            if not record.kill_landed and record.returncode != 0:
                break  # it failed by itself: resuming again would bury why
        else:
            process, final = start_drive(
                root, CHAOS_NAME, resume=True, seed=seed, number=len(drives) + 1
            )
            drives.append(finish_drive(process, final, timeout))
    finally:
        finish_drive(baseline_process, baseline, timeout)
    checks = run_checks(root / CHAOS_NAME, root / BASELINE_NAME, drives, baseline)
    return ChaosReport(
        root, kills, seed, drives, baseline, checks, seconds=time.monotonic() - began
    )


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


def run_checks(
    experiment_dir: Path,
    baseline_dir: Path,
    drives: Sequence[DriveRecord],
    baseline: DriveRecord,
) -> list[Check]:
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
    return checks


# -- the command line -------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("drive", help="run (or --resume) the experiment DIR_ROOT/NAME")
    one.add_argument("root", type=Path, metavar="DIR_ROOT")
    one.add_argument("name", metavar="NAME")
    one.add_argument("--resume", action="store_true")
    one.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the experiment's seed")
    loop = commands.add_parser("run", help="the chaos loop, the baseline and the checks")
    loop.add_argument("root", type=Path, metavar="DIR_ROOT")
    loop.add_argument("--kills", type=int, required=True)
    loop.add_argument("--seed", type=int, default=DEFAULT_SEED)
    loop.add_argument("--max-delay", type=float, default=3.0, help="seconds after the first event")
    loop.add_argument("--timeout", type=float, default=RUN_TIMEOUT_S, help="for the last driver")
    args = parser.parse_args(argv)
    if args.command == "drive":
        return drive(args.root.resolve(), args.name, resume=args.resume, seed=args.seed)
    report = run_chaos(
        args.root.resolve(),
        kills=args.kills,
        seed=args.seed,
        max_delay=args.max_delay,
        timeout=args.timeout,
    )
    text = report.render()
    (args.root / "report.txt").write_text(text + "\n")
    print(text)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
