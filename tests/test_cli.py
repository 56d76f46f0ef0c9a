"""The `tunecore` command line, run in-process (`main([...])`) on the
in-process executor. The trainables below are importable as
`tests.test_cli:<name>`, which is how the CLI names them."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

import tunecore
from tests.shell.test_lock import held_by_another_process
from tests.storage_fixtures import StorageTarget
from tunecore.cli import main
from tunecore.model import (
    Asked,
    ExperimentEvent,
    ResultReported,
    StartRequested,
    StopRequested,
    TrialRequested,
    TrialStatus,
)
from tunecore.schedulers import PB2
from tunecore.shell.eventlog import read_log
from tunecore.shell.inbox import AddTrialRequest, Inbox, StopTrialRequest
from tunecore.shell.journal import SnapshotStore
from tunecore.shell.lock import driver_lock
from tunecore.shell.mirror.remote import open_stored
from tunecore.shell.mirror.shipper import StateShipper
from tunecore.shell.processes import process_start
from tunecore.shell.replay import replay
from tunecore.shell.storage.resolve import resolve_storage, staging_root, within

WAIT_S = 20.0
"""The most any handshake below waits; they normally take well under a second."""

ITERATIONS = 3


# -- trainables -------------------------------------------------------------------------


def quadratic(config: dict[str, object]) -> None:
    x = float(str(config.get("x", 0.0)))
    for step in range(1, ITERATIONS + 1):
        tunecore.report({"loss": (x - 0.5) ** 2 + 1.0 / step})


def broken(config: dict[str, object]) -> None:
    raise RuntimeError("this trainable always fails")


class Handshake:
    """Between a test and the `waits_for_a_request` trial it runs."""

    def __init__(self) -> None:
        self.running = threading.Event()  # set by the trial after its first result
        self.posted = threading.Event()  # set by the test after the CLI posted
        self.trial_id = ""
        self.inbox = Path()
        self.stored_inbox: Path | None = None  # the inbox in storage, for a URI


HANDSHAKE = Handshake()


def waits_for_a_request(config: dict[str, object]) -> None:
    """One result, then (bounded) until the test posted a request and the
    loop took it (its file is gone: the loop applies what it took before it
    reads the next result), then four more results. A trial `add`ed by the
    test (config `added`) reports once and ends."""
    tunecore.report({"step": 1})
    if config.get("added"):
        return
    HANDSHAKE.trial_id = tunecore.get_context().trial_id
    HANDSHAKE.running.set()
    assert HANDSHAKE.posted.wait(WAIT_S)
    deadline = time.monotonic() + WAIT_S
    inboxes = [HANDSHAKE.inbox, HANDSHAKE.stored_inbox or HANDSHAKE.inbox]
    while any(any(inbox.glob("*.json")) for inbox in inboxes) and time.monotonic() < deadline:
        time.sleep(0.01)  # polling the inbox directories, with a deadline
    for step in range(2, 6):
        tunecore.report({"step": step})


def interrupts(config: dict[str, object]) -> None:
    """Presses Ctrl-C (SIGINT to this process) after its first result."""
    tunecore.report({"step": 1})
    signal.raise_signal(signal.SIGINT)
    tunecore.report({"step": 2})


INTERRUPTED_ONCE: list[bool] = []

ONE_TRIAL_INTERRUPTED = threading.Event()


def interrupts_one_trial(config: dict[str, object]) -> None:
    """Presses Ctrl-C after its first result in the first trial only (the
    test clears ONE_TRIAL_INTERRUPTED): another trial's thread raising one
    after the run has ended would reach pytest itself."""
    tunecore.report({"step": 1})
    if not ONE_TRIAL_INTERRUPTED.is_set():
        ONE_TRIAL_INTERRUPTED.set()
        signal.raise_signal(signal.SIGINT)
    tunecore.report({"step": 2})


def interrupts_once(config: dict[str, object]) -> None:
    """Presses Ctrl-C after its first result the first time it runs only."""
    for step in range(1, 4):
        tunecore.report({"step": step})
        if not INTERRUPTED_ONCE:
            INTERRUPTED_ONCE.append(True)
            signal.raise_signal(signal.SIGINT)


# -- helpers -------------------------------------------------------------------------------


def run(tmp_path: Path, trainable: str, *options: str, name: str = "exp") -> int:
    return main(
        [
            "run",
            f"tests.test_cli:{trainable}",
            "--executor",
            "in_process",
            "--storage-path",
            str(tmp_path),
            "--name",
            name,
            "--verbose",
            "0",
            *options,
        ]
    )


def events(directory: Path) -> list[ExperimentEvent]:
    return list(read_log(directory, quiet=True).events)


def record_offsets(directory: Path) -> list[int]:
    """The byte offset of every record of the event log (0 is the header)."""
    data = (directory / "events.log").read_bytes()
    offsets, offset = [], 20  # after the preamble: 16 bytes of magic, the format (u32)
    while offset < len(data):
        offsets.append(offset)
        (length,) = struct.unpack_from("<I", data, offset)
        offset += 8 + length
    return offsets


@pytest.fixture
def finished(tmp_path: Path) -> Path:
    """A finished experiment: 2 trials of `quadratic`."""
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"x": {"grid_search": [0.25, 0.75]}}))
    code = run(tmp_path, "quadratic", "--param-space", str(space), "--metric", "loss")
    assert code == 0
    return tmp_path / "exp"


@pytest.fixture
def unfinished(finished: Path) -> Path:
    """The same experiment as if its driver died after the first trial's
    first result: the log is cut just after it, and the snapshots go (a
    live run never snapshots ahead of its log; the log alone is enough)."""
    log = read_log(finished)
    first = next(i for i, e in enumerate(log.events) if isinstance(e, ResultReported))
    cut = record_offsets(finished)[first + 2]  # record 0 is the header
    with (finished / "events.log").open("r+b") as handle:
        handle.truncate(cut)
    for snapshot in SnapshotStore(finished).directory.iterdir():
        snapshot.unlink()
    return finished


@pytest.fixture
def handshake(tmp_path: Path) -> Iterator[Handshake]:
    global HANDSHAKE  # noqa: PLW0603 - the trainable reads it by name
    HANDSHAKE = Handshake()
    HANDSHAKE.inbox = tmp_path / "exp" / "inbox"
    yield HANDSHAKE
    HANDSHAKE.posted.set()  # never leave a trial waiting


# -- run ------------------------------------------------------------------------------------


def test_run_with_a_toml_space_samples_every_parameter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    space = tmp_path / "space.toml"
    space.write_text(
        "x = {uniform = [0, 1]}\n"
        'optimizer = {grid_search = ["sgd", "adam"]}\n'
        "epochs = 3\n"
        "[model]\n"
        "width = {randint = [1, 4]}\n"
    )
    code = run(
        tmp_path,
        "quadratic",
        "--param-space",
        str(space),
        "--num-samples",
        "2",
        "--stop",
        "training_iteration=2",
        "--seed",
        "7",
    )
    assert code == 0
    directory = tmp_path / "exp"
    assert f"Experiment directory: {directory}" in capsys.readouterr().out
    trials = list(replay(directory).state.trials.values())
    assert len(trials) == 4
    assert sorted(str(t.spec.config["optimizer"]) for t in trials) == ["adam", "adam", "sgd", "sgd"]
    for trial in trials:
        config = trial.spec.config
        assert 0 <= float(str(config["x"])) < 1
        assert config["epochs"] == 3
        assert config["model"] in ({"width": 1}, {"width": 2}, {"width": 3})
        assert trial.status is TrialStatus.TERMINATED
        assert trial.last_result["training_iteration"] == 2  # --stop


def test_run_with_pb2_chooses_within_the_ranges_of_the_space(tmp_path: Path) -> None:
    space = tmp_path / "space.toml"
    space.write_text(
        'x = {uniform = [0, 1]}\nkind = {choice = ["a", "b"]}\n'
        "[model]\nwidth = {randint = [1, 4]}\n"
    )
    code = run(
        tmp_path,
        "quadratic",
        "--param-space",
        str(space),
        "--scheduler",
        "pb2",
        "--metric",
        "loss",
        "--mode",
        "min",
        "--time-attr",
        "training_iteration",
        "--perturbation-interval",
        "1",
        "--seed",
        "3",
    )
    assert code == 0
    scheduler = replay(tmp_path / "exp").state.scheduler
    assert isinstance(scheduler, PB2)
    # The ranges, a randint's excluded high left out; the choice is not one.
    assert scheduler.hyperparam_bounds == {"x": (0.0, 1.0), "model/width": (1.0, 3.0)}
    assert (scheduler.perturbation_interval, scheduler.seed) == (1.0, 3)


def test_run_stops_on_a_boolean_criterion(tmp_path: Path) -> None:
    """`--stop done=true` as Ray's `stop={"done": True}` (issue 9, bug 3)."""
    assert run(tmp_path, "quadratic", "--stop", "done=true") == 0
    (trial,) = replay(tmp_path / "exp").state.trials.values()
    assert trial.spec.stopping_criterion == {"done": True}
    assert trial.status is TrialStatus.TERMINATED
    assert trial.last_result["training_iteration"] == ITERATIONS


def test_run_with_a_json_space_under_asha(tmp_path: Path) -> None:
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"x": {"loguniform": [0.01, 1]}, "depth": {"choice": [1, 2]}}))
    options = ["--metric", "loss", "--mode", "min", "--scheduler", "asha", "--max-t", "3"]
    code = run(tmp_path, "quadratic", "--param-space", str(space), "--num-samples", "3", *options)
    assert code == 0
    state = replay(tmp_path / "exp").state
    assert type(state.scheduler).__name__ == "ASHAScheduler"
    assert len(state.trials) == 3
    assert all(t.spec.config["depth"] in (1, 2) for t in state.trials.values())


def test_run_with_optuna_logs_each_suggestion_and_replays_without_it(tmp_path: Path) -> None:
    pytest.importorskip("optuna")
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"x": {"uniform": [0, 1]}, "epochs": 2}))
    options = ["--metric", "loss", "--mode", "min", "--search", "optuna", "--seed", "4"]
    limit = ["--max-concurrent-trials", "2"]
    code = run(
        tmp_path, "quadratic", "--param-space", str(space), "--num-samples", "5", *options, *limit
    )
    assert code == 0
    log = read_log(tmp_path / "exp")
    configs = [e.config or {} for e in log.events if isinstance(e, Asked)]
    assert len(configs) == 5
    state = replay(tmp_path / "exp").state
    trials = sorted(state.trials.values(), key=lambda t: state.index[t.trial_id])
    assert [t.spec.config for t in trials] == [{**c, "epochs": 2} for c in configs]
    # Replay and status read the logged suggestions: they never import Optuna.
    check = (
        "import sys; from tunecore.cli import main; "
        f"assert main(['replay', {str(tmp_path / 'exp')!r}]) == 0; "
        f"assert main(['status', {str(tmp_path / 'exp')!r}]) == 0; "
        "assert 'optuna' not in sys.modules, 'optuna was imported'"
    )
    subprocess.run([sys.executable, "-c", check], check=True, capture_output=True)


def test_a_search_whose_package_is_missing_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna raises ImportError
    for module in [m for m in sys.modules if m.startswith("tunecore.search.optuna")]:
        monkeypatch.delitem(sys.modules, module)
    code = run(tmp_path, "quadratic", "--metric", "loss", "--mode", "min", "--search", "optuna")
    assert code == 2
    assert "--search optuna: OptunaSearch needs optuna: pip install 'tunecore[optuna]'" in (
        capsys.readouterr().err
    )


def test_errored_trials_exit_with_1(tmp_path: Path) -> None:
    assert run(tmp_path, "broken") == 1


@pytest.mark.parametrize(
    ("file", "text", "expected"),
    [
        ("space.toml", "x = {uniform = [1, 0]}", r"parameter 'x' = \{\"uniform\": \[1, 0\]\}"),
        ("space.toml", 'x = {uniform = "a"}', r"'x' .* uniform takes a list \[low, high\]"),
        ("space.toml", "x = {randint = [1]}", r"'x' = \{\"randint\": \[1\]\} .* \[low, high\]"),
        ("space.toml", "[model]\nlr = {loguniform = [0, 1]}", r"parameter 'model.lr'"),
        ("space.toml", "when = 1979-05-27", r"parameter 'when' = .*1979.* a JSON value"),
        ("space.toml", "x = ", r"not valid TOML"),
        ("space.json", '{"x": {"choice": []}}', r"parameter 'x' = \{\"choice\": \[\]\}"),
        (
            "space.toml",
            "lr = {loguniforn = [1e-4, 1e-1]}",
            r"parameter 'lr' = \{\"loguniforn\": .* did you mean 'loguniform'\?",
        ),
        ("space.json", '{"m": {"b": {"choise": [1, 2]}}}', r"'m.b' .* did you mean 'choice'\?"),
        ("space.json", "[1, 2]", r"must be a table/object of parameters"),
        ("space.yaml", "x: 1", r"must end in .toml or .json"),
    ],
)
def test_a_bad_param_space_names_the_parameter_and_exits_with_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], file: str, text: str, expected: str
) -> None:
    space = tmp_path / file
    space.write_text(text)
    assert run(tmp_path, "quadratic", "--param-space", str(space)) == 2
    error = capsys.readouterr().err
    assert error.startswith(
        (f"tunecore run: error: {space}", f"tunecore run: error: --param-space {space}")
    )
    assert re.search(expected, error), error
    assert not (tmp_path / "exp").exists()  # nothing was started


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--scheduler", "asha"], "--scheduler asha needs --metric"),
        (["--scheduler", "asha", "--metric", "loss"], "--scheduler asha needs --mode"),
        (["--max-t", "9"], "--max-t applies to --scheduler asha or hyperband only"),
        (
            ["--scheduler", "pbt", "--metric", "loss", "--mode", "min"],
            "the parameter space has none",
        ),
        (
            ["--scheduler", "pb2", "--metric", "loss", "--mode", "min"],
            "--scheduler pb2 chooses the parameters given as a numeric range",
        ),
        (["--stop", "loss"], "'loss' is not KEY=NUMBER"),
    ],
)
def test_bad_scheduler_options_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], expected: str
) -> None:
    try:
        code = run(tmp_path, "quadratic", *options)
    except SystemExit as exit_:  # argparse's own usage errors
        code = int(str(exit_.code))
    assert code == 2
    assert expected in capsys.readouterr().err


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--num-samples", "0"], "--num-samples=0 would run nothing"),
        (["--max-failures", "-5"], "--max-failures=-5 is invalid: Input should be greater"),
        (["--cpus-per-trial", "-1"], "--cpus-per-trial=-1.0 "),
        (["--gpus-per-trial", "-2"], "--gpus-per-trial=-2.0 "),
    ],
)
def test_a_bad_flag_value_is_named_by_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], expected: str
) -> None:
    assert run(tmp_path, "quadratic", *options) == 2
    error = capsys.readouterr().err
    assert f"tunecore run: error: {expected}" in error
    for pydantic_words in ("validation error", "pydantic", "TuneConfig", "num_samples"):
        assert pydantic_words not in error
    assert not (tmp_path / "exp").exists()


def test_an_unknown_trainable_exits_with_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, "no_such_function") == 2
    assert "has no 'no_such_function'" in capsys.readouterr().err


def test_ctrl_c_exits_with_130_and_says_how_to_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, "interrupts") == 130
    assert f"tunecore resume {tmp_path / 'exp'}" in capsys.readouterr().out


def test_resume_after_ctrl_c_runs_the_interrupted_trials_to_their_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    INTERRUPTED_ONCE.clear()
    assert run(tmp_path, "interrupts_once", "--num-samples", "2") == 130
    interrupted = replay(tmp_path / "exp").state
    assert not any(t.status is TrialStatus.TERMINATED for t in interrupted.trials.values())
    assert (
        main(["resume", str(tmp_path / "exp"), "--trainable", "tests.test_cli:interrupts_once"])
        == 0
    )
    resumed = replay(tmp_path / "exp").state
    assert len(resumed.trials) == 2
    for trial in resumed.trials.values():
        assert trial.status is TrialStatus.TERMINATED
        assert trial.last_result["step"] == 3


def test_the_command_printed_after_ctrl_c_resumes_the_run_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The hint an interrupted run prints is a command a shell runs as it
    is: the directory quoted (a space in it), `--trainable` what the run
    was given. Run as printed, it takes the trials to their end."""
    INTERRUPTED_ONCE.clear()
    storage = tmp_path / "my runs"
    assert run(storage, "interrupts_once", "--num-samples", "2") == 130
    out = capsys.readouterr().out
    [hint] = [line for line in out.splitlines() if line.startswith("Interrupted. Continue it")]
    argv = shlex.split(hint.removeprefix("Interrupted. Continue it with: "))
    trainable = "tests.test_cli:interrupts_once"
    assert argv == ["tunecore", "resume", str(storage / "exp"), "--trainable", trainable]
    assert main(argv[1:]) == 0
    resumed = replay(storage / "exp").state
    assert [t.status for t in resumed.trials.values()] == [TrialStatus.TERMINATED] * 2


# -- replay and status ------------------------------------------------------------------


def test_replay_prints_the_status_and_what_it_verified(
    finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(finished)]) == 0
    out = capsys.readouterr().out
    assert "== Status ==" in out
    assert "Number of trials: 2 (2 TERMINATED)" in out
    assert "TERMINATED trials:" in out
    assert f"Replayed {len(events(finished))} events: 1 snapshots verified" in out


def test_status_reads_a_finished_and_an_unfinished_experiment(
    finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", str(finished)]) == 0
    out = capsys.readouterr().out
    assert "TERMINATED trials:" in out
    assert "the experiment has finished." in out


def test_status_of_a_running_experiment_with_a_torn_tail_writes_nothing(
    unfinished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = unfinished / "events.log"
    with log.open("ab") as handle:
        handle.write(b"\x40\x00\x00\x00torn")  # a record the writer is still writing
    before = log.read_bytes()
    assert main(["status", str(unfinished)]) == 0
    out = capsys.readouterr().out
    assert "RUNNING trials:" in out
    assert "the experiment is not running (no driver holds it)" in out
    assert log.read_bytes() == before


def status_line(directory: Path | str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["status", str(directory)]) == 0
    return capsys.readouterr().out.splitlines()[-1]


def test_status_tells_a_running_driver_from_a_dead_one(
    unfinished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    host = socket.gethostname()
    with held_by_another_process(unfinished) as driver:
        line = status_line(unfinished, capsys)
        assert line.endswith(f"the experiment is running (driver pid {driver.pid} on {host}).")
        driver.send_signal(signal.SIGKILL)  # it dies holding the lock: its record stays
        driver.wait()
        line = status_line(unfinished, capsys)
    assert line.endswith(
        f"the experiment is not running (driver pid {driver.pid} on {host} is gone). "
        f"Resume it with: tunecore resume {unfinished} --trainable MODULE:FUNCTION"
    )


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process start times need /proc")
def test_status_does_not_take_a_process_given_a_dead_drivers_pid_for_it(
    unfinished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pid a dead driver recorded now belongs to another process (this
    one): its start time is not the driver's."""
    record = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": "then"}
    record["process_start"] = "another-boot:12345"
    (unfinished / "driver.lock").write_text(json.dumps(record))
    assert "is gone" in status_line(unfinished, capsys)
    record["process_start"] = process_start(os.getpid())
    (unfinished / "driver.lock").write_text(json.dumps(record))
    assert f"is running (driver pid {os.getpid()}" in status_line(unfinished, capsys)


def test_status_cannot_tell_whether_a_driver_on_another_host_runs(
    unfinished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {"pid": 4242, "host": "elsewhere.example", "started_at": "then"}
    (unfinished / "driver.lock").write_text(json.dumps(record))
    line = status_line(unfinished, capsys)
    assert "its driver pid 4242 on elsewhere.example runs on another host" in line
    assert "cannot be told from here. If it is gone: Resume it with: tunecore resume" in line


def test_status_of_an_interrupted_experiment_says_it_stopped_unfinished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ONE_TRIAL_INTERRUPTED.clear()
    assert run(tmp_path, "interrupts_one_trial", "--num-samples", "2") == 130
    capsys.readouterr()
    line = status_line(tmp_path / "exp", capsys)
    assert line.endswith(
        "the experiment was interrupted (Ctrl-C) with 2 trials not finished, and is not "
        f"running. Resume it with: tunecore resume {tmp_path / 'exp'} --trainable MODULE:FUNCTION"
    )


def test_status_of_a_stored_experiment_reads_its_drivers_lease(
    unfinished: Path, file_store: StorageTarget, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = stored(unfinished, file_store)
    lease = within(file_store.store, "exp")
    record = {"pid": 4242, "host": "elsewhere.example", "token": "t", "renewed": time.time()}
    lease.write_bytes("driver.lease", json.dumps(record).encode())
    line = status_line(uri, capsys)
    assert "the experiment is running (driver pid 4242 on elsewhere.example, which renewed" in line
    record["renewed"] = time.time() - 3600.0  # its driver stopped renewing it an hour ago
    lease.write_bytes("driver.lease", json.dumps(record).encode())
    line = status_line(uri, capsys)
    assert line.endswith(
        "the experiment is not running (driver pid 4242 on elsewhere.example is gone). "
        f"Resume it with: tunecore resume {uri} --trainable MODULE:FUNCTION"
    )


@pytest.mark.parametrize("command", ["replay", "status", "resume", "stop", "add"])
def test_a_missing_or_foreign_directory_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    extra = {"stop": ["some_trial"], "add": ["--config", "{}"]}.get(command, [])
    missing = tmp_path / "nowhere"
    assert main([command, str(missing), *extra]) == 2
    assert f"error: {missing} does not exist" in capsys.readouterr().err
    assert main([command, str(tmp_path), *extra]) == 2
    expected = f"error: {tmp_path} is not a tunecore experiment directory (no events.log)"
    assert expected in capsys.readouterr().err
    (tmp_path / "events.log").write_text("not ours")
    assert main([command, str(tmp_path), *extra]) == 2
    assert "is not a tunecore event log" in capsys.readouterr().err


def test_a_corrupt_log_exits_with_4_naming_the_offset_and_truncate_cuts_it(
    finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    offsets = record_offsets(finished)
    damaged = offsets[len(offsets) // 2]
    log = finished / "events.log"
    data = bytearray(log.read_bytes())
    data[damaged + 10] ^= 0xFF  # inside the record's payload
    log.write_bytes(bytes(data))

    assert main(["replay", str(finished)]) == 4
    error = capsys.readouterr().err
    assert f"at byte offset {damaged} is corrupt (checksum mismatch)" in error
    assert f"tunecore replay {finished} --truncate" in error
    assert main(["status", str(finished)]) == 4  # read-only: it never cuts

    assert main(["replay", str(finished), "--truncate"]) == 0
    assert f"Cut {log} at byte offset {damaged}" in capsys.readouterr().out
    assert log.stat().st_size == damaged
    assert main(["replay", str(finished)]) == 0


def test_truncate_never_cuts_the_log_of_a_running_driver(
    finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`replay --truncate` writes the log as a driver does, and cut it
    under a driver running on (which appends after the cut, on a state
    the log no longer leads to): it is refused while one holds the lock."""
    offsets = record_offsets(finished)
    log = finished / "events.log"
    data = bytearray(log.read_bytes())
    data[offsets[len(offsets) // 2] + 10] ^= 0xFF
    log.write_bytes(bytes(data))

    with driver_lock(finished):
        assert main(["replay", str(finished), "--truncate"]) == 2

    assert "in use by another driver" in capsys.readouterr().err
    assert log.read_bytes() == data
    assert not list(finished.glob("events.log.quarantine-*"))


def test_a_replay_that_disagrees_with_a_snapshot_exits_with_3(
    finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SnapshotStore(finished)
    (records,) = store.available()
    snapshot = store.load(records)
    assert snapshot is not None
    store.write(records, bytes(len(snapshot.digest)), snapshot.state)
    assert main(["replay", str(finished)]) == 3
    assert "command digest mismatch" in capsys.readouterr().err


# -- an experiment in storage, by its URI ---------------------------------------------------

STORAGE = ["file_store", "s3_store"]


def stored(finished: Path, target: StorageTarget) -> str:
    """`finished` put in `target` as a mirrored run leaves it (its state
    shipped), then deleted here; its URI."""
    store = within(target.store, finished.name)
    size = (finished / "events.log").stat().st_size
    StateShipper(store, finished, lambda: size, lag_s=60.0).close()
    shutil.rmtree(finished)
    parts = urllib.parse.urlsplit(target.uri)
    return urllib.parse.urlunsplit(parts._replace(path=f"{parts.path}/{finished.name}"))


@pytest.mark.parametrize("target_name", STORAGE)
def test_status_and_replay_read_an_experiment_from_its_uri(
    finished: Path,
    target_name: str,
    request: pytest.FixtureRequest,
    capsys: pytest.CaptureFixture[str],
) -> None:
    count = len(events(finished))
    uri = stored(finished, request.getfixturevalue(target_name))
    shown = uri.replace("testing:testing@", "")  # never the credentials
    assert main(["status", uri]) == 0
    out = capsys.readouterr().out
    assert "TERMINATED trials:" in out
    assert "the experiment has finished." in out
    assert shown in out
    assert "testing:testing" not in out
    assert main(["replay", uri]) == 0
    assert f"Replayed {count} events: 1 snapshots verified" in capsys.readouterr().out


@pytest.mark.parametrize("target_name", STORAGE)
def test_a_uri_without_an_experiment_is_named_in_one_line(
    target_name: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    target: StorageTarget = request.getfixturevalue(target_name)
    parts = urllib.parse.urlsplit(target.uri)
    missing = urllib.parse.urlunsplit(parts._replace(path=f"{parts.path}/nowhere"))
    for command in ("status", "replay"):
        assert main([command, missing]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1
        assert f"tunecore {command}: error: " in error
        assert "/nowhere" in error
        assert "holds no tunecore experiment" in error


def test_a_request_to_a_uri_without_a_log_yet_says_a_new_run_ships_it_soon(
    file_store: StorageTarget, capsys: pytest.CaptureFixture[str]
) -> None:
    """An experiment that has just started has shipped no log yet: `stop`
    and `add` say it is not there, and when it would be."""
    uri = file_store.experiment_uri("starting")
    for command in (["stop", uri, "some_trial"], ["add", uri, "--config", '{"x": 1}']):
        assert main(command) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1
        assert f"{uri} holds no tunecore experiment" in error
        assert "up to a sync period (5 s by default) after it starts" in error


def test_a_corrupt_stored_log_exits_with_4_naming_the_uri(
    finished: Path, file_store: StorageTarget, capsys: pytest.CaptureFixture[str]
) -> None:
    offsets = record_offsets(finished)
    damaged = offsets[len(offsets) // 2]
    uri = stored(finished, file_store)
    store = within(file_store.store, "exp")
    (segment,) = store.list("events")
    data = bytearray(store.read_bytes(f"events/{segment}"))
    data[damaged + 10] ^= 0xFF
    store.write_bytes(f"events/{segment}", bytes(data))
    assert main(["replay", uri]) == 4
    error = capsys.readouterr().err
    record = len(offsets) // 2
    assert (
        f"{uri}: the stored event log's record {record} at byte offset {damaged} is corrupt"
        in error
    )
    assert "tunecore-stored-" not in error  # the local copy is not what the user named
    assert main(["replay", uri, "--truncate"]) == 2
    assert "a stored log is only read here" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["status", "replay", "resume"])
def test_a_gap_in_the_stored_log_exits_with_4_at_its_offset_and_deletes_nothing(
    finished: Path, file_store: StorageTarget, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """A middle segment removed: the log used to read as a shorter one
    (`status` exit 0), and a resume deleted the segments after the gap."""
    offsets = record_offsets(finished)
    uri = stored(finished, file_store)
    store = within(file_store.store, "exp")
    (segment,) = store.list("events")
    data = store.read_bytes(f"events/{segment}")
    store.delete_file(f"events/{segment}")
    cuts = [0, offsets[len(offsets) // 3], offsets[2 * len(offsets) // 3], len(data)]
    for start, end in itertools.pairwise(cuts):
        store.write_bytes(f"events/seg_{start:016d}_{end:016d}", data[start:end])
    store.delete_file(f"events/seg_{cuts[1]:016d}_{cuts[2]:016d}")
    before = store.list("events")
    arguments = [command, uri] + (
        ["--trainable", "tests.test_cli:quadratic"] if command == "resume" else []
    )
    assert main(arguments) == 4
    error = capsys.readouterr().err
    assert f"byte offset {cuts[1]} is corrupt (the stored log has a gap" in error
    assert store.list("events") == before


@pytest.mark.slow  # some 15 s: the `slow` session
def test_stop_through_the_uri_reaches_a_running_trial(
    handshake: Handshake, file_store: StorageTarget, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tunecore stop URI` from a machine that only has the URI: the
    request goes to the inbox in storage, and the driver's shipper brings
    it to the running loop (within its sync period)."""
    spec, _ = resolve_storage(file_store.uri)
    staged = Path(staging_root(spec)) / "exp"
    handshake.inbox = staged / "inbox"
    handshake.stored_inbox = Path(file_store.store.uri("exp/inbox"))
    args = ["--executor", "in_process", "--name", "exp", "--verbose", "0"]
    run_args = ["run", "tests.test_cli:waits_for_a_request", "--storage-path", file_store.uri]
    codes: list[int] = []
    driver = threading.Thread(target=lambda: codes.append(main([*run_args, *args])))
    driver.start()
    try:
        assert handshake.running.wait(WAIT_S)
        uri = file_store.experiment_uri("exp")
        # The stored state is up to a shipping period behind: until it
        # names the trial, stop says so.
        deadline = time.monotonic() + WAIT_S
        while main(["stop", uri, handshake.trial_id]) != 0:
            assert "a sync period" in capsys.readouterr().err
            assert time.monotonic() < deadline, "the stored state never named the trial"
            time.sleep(0.2)  # polling the storage, with a deadline
        out = capsys.readouterr().out
        assert f"Queued stop {handshake.trial_id}" in out
        assert "within a few seconds" in out
    finally:
        handshake.posted.set()
        driver.join(WAIT_S)
    assert codes == [0]
    assert os.listdir(staged) == ["driver.lock"]  # the storage holds it all
    trial = replay(open_stored(uri).local).state.trials[handshake.trial_id]
    assert trial.status is TrialStatus.TERMINATED
    assert trial.last_result["step"] == 1  # it would have gone on to 5
    assert file_store.store.list("exp/inbox") == []


def test_stop_through_a_uri_names_the_uri_when_the_experiment_has_ended(
    finished: Path, file_store: StorageTarget, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = stored(finished, file_store)
    assert main(["stop", uri, "some_trial"]) == 2
    error = capsys.readouterr().err
    assert f"the experiment in {uri} has ended" in error
    assert "tunecore-stored-" not in error  # the local copy is not what the user named
    assert file_store.store.list("exp/inbox") == []


# -- resume -----------------------------------------------------------------------------


def test_resuming_a_finished_experiment_runs_nothing_again(finished: Path) -> None:
    ran = [e for e in events(finished) if isinstance(e, ResultReported | StartRequested)]
    assert main(["resume", str(finished), "--trainable", "tests.test_cli:quadratic"]) == 0
    assert [e for e in events(finished) if isinstance(e, ResultReported | StartRequested)] == ran


def test_resuming_an_unfinished_experiment_finishes_it(unfinished: Path) -> None:
    assert main(["resume", str(unfinished), "--trainable", "tests.test_cli:quadratic"]) == 0
    state = replay(unfinished).state
    assert state.done
    assert all(t.status is TrialStatus.TERMINATED for t in state.trials.values())


# -- stop and add -----------------------------------------------------------------------


def test_the_inbox_turns_posted_requests_into_events_in_order(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = Inbox(tmp_path)
    posted = [
        inbox.post(StopTrialRequest(trial_id="t_00001")),
        inbox.post(AddTrialRequest(config={"lr": 0.1}, experiment_tag="extra")),
    ]
    junk = inbox.directory / "00000000000000000000-1-000000.json"
    junk.write_text('{"type": "StopTrialRequest"}')  # no trial id
    with caplog.at_level(logging.WARNING):
        taken = inbox.take(at=12.5)
    names = sorted(path.name for path in posted)
    assert taken == [
        StopRequested(trial_id="t_00001", at=12.5, request=names[0]),
        TrialRequested(config={"lr": 0.1}, experiment_tag="extra", at=12.5, request=names[1]),
    ]
    assert f"{junk}: skipped a request that cannot be read" in caplog.text
    assert list(inbox.directory.iterdir()) == []
    assert inbox.take(at=13.0) == []


def test_stop_and_add_check_the_experiment_first(
    unfinished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = replay(unfinished, verify=False).state
    trial_ids = sorted(state.trials)
    assert main(["stop", str(unfinished), "nope"]) == 2
    assert f"there is no trial 'nope'; the experiment's trials: {', '.join(trial_ids)}" in (
        capsys.readouterr().err
    )
    assert main(["add", str(unfinished), "--config", "[1]"]) == 2
    assert "--config must be a JSON object" in capsys.readouterr().err
    assert main(["add", str(unfinished), "--config", '{"x": NaN}']) == 2
    assert "NaN is not a JSON number" in capsys.readouterr().err
    assert not (unfinished / "inbox").exists()


def test_add_refuses_a_config_the_event_log_cannot_store(
    unfinished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 10, item 4: such a config once killed the driver, and every
    resume after it, when its request was logged."""
    refused = {
        '{"x": 100000000000000000000000}': "--config['x']=100000000000000000000000 cannot be",
        '{"x": -18446744073709551616}': "--config['x']=-18446744073709551616 cannot be stored",
        '{"x": "\\ud800"}': "--config['x']='\\ud800' cannot be stored",
        '{"\\ud800": 1}': "--config['\\ud800']='\\ud800' cannot be stored",
        '{"x": ' + "[" * 500 + "]" * 500 + "}": "nested at most 100 deep",
        '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}": "--config is nested too deep to read",
    }
    for config, reason in refused.items():
        assert main(["add", str(unfinished), "--config", config]) == 2
        assert reason in capsys.readouterr().err
    assert not (unfinished / "inbox").exists()


def test_stop_and_add_refuse_an_experiment_that_has_ended(
    finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trial_id = next(iter(replay(finished).state.trials))
    assert main(["stop", str(finished), trial_id]) == 2
    assert "has ended, so nothing reads requests any more" in capsys.readouterr().err
    assert not (finished / "inbox").exists()


@contextlib.contextmanager
def running_experiment(tmp_path: Path, handshake: Handshake) -> Iterator[Path]:
    """An experiment running in a thread, its first trial waiting (bounded)
    for the test's request; the directory, while it runs. On leaving, the
    trial is let go and the run must end cleanly."""
    space = tmp_path / "space.json"  # what `add` may ask for
    space.write_text(json.dumps({"added": False, "lr": {"uniform": [0, 1]}}))
    codes: list[int] = []
    driver = threading.Thread(
        target=lambda: codes.append(
            run(tmp_path, "waits_for_a_request", "--param-space", str(space))
        )
    )
    driver.start()
    try:
        assert handshake.running.wait(WAIT_S)
        yield tmp_path / "exp"
    finally:
        handshake.posted.set()
        driver.join(WAIT_S)
    assert codes == [0]


def test_stop_reaches_a_running_trial(
    tmp_path: Path, handshake: Handshake, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_experiment(tmp_path, handshake) as directory:
        assert main(["stop", str(directory), handshake.trial_id]) == 0
        assert f"Queued stop {handshake.trial_id}" in capsys.readouterr().out
    trial = replay(directory).state.trials[handshake.trial_id]
    assert trial.status is TrialStatus.TERMINATED
    assert trial.last_result["step"] == 1  # it would have gone on to 5
    stops = [e for e in events(directory) if isinstance(e, StopRequested)]
    assert [e.trial_id for e in stops] == [handshake.trial_id]


def test_add_reaches_a_running_experiment(
    tmp_path: Path, handshake: Handshake, capsys: pytest.CaptureFixture[str]
) -> None:
    with running_experiment(tmp_path, handshake) as directory:
        config = '{"added": true, "lr": 0.5}'
        assert main(["add", str(directory), "--config", config, "--tag", "extra"]) == 0
        assert "Queued a trial with config" in capsys.readouterr().out
    trials = replay(directory).state.trials.values()
    (added,) = [t for t in trials if t.spec.config.get("added")]
    assert added.spec.config == {"added": True, "lr": 0.5}
    assert added.status is TrialStatus.TERMINATED
    assert added.last_result["step"] == 1  # it ran
    requested = [e for e in events(directory) if isinstance(e, TrialRequested)]
    assert [e.config for e in requested] == [{"added": True, "lr": 0.5}]
    first = next(t for t in trials if not t.spec.config.get("added"))
    assert first.last_result["step"] == 5


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--metric", "l\udcff", "--mode", "min"], '--metric: "l\\xff" is not valid UTF-8'),
        (["--stop", "lo\udcfess=1"], '--stop: "lo\\xfess" is not valid UTF-8'),
        (["--name", "\udcc3("], '--name: "\\xc3(" is not valid UTF-8'),
    ],
)
def test_run_refuses_an_argument_that_is_not_utf8_naming_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], expected: str
) -> None:
    """Python decodes such bytes on the command line to lone surrogates,
    which once crashed the run with a traceback (exit 1)."""
    assert run(tmp_path, "quadratic", *options) == 2
    assert f"tunecore run: error: {expected}" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_add_refuses_a_tag_that_is_not_utf8_from_the_real_command_line(
    unfinished: Path,
) -> None:
    """The bytes as a shell passes them (`--tag $'\\xff'`), decoded by
    Python itself: the add once crashed writing the inbox entry."""
    command = [sys.executable, "-m", "tunecore.cli", "add", str(unfinished)]
    done = subprocess.run(
        [*command, "--config", '{"x": 4}', "--tag", b"\xff"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr == 'tunecore add: error: --tag: "\\xff" is not valid UTF-8\n'
    assert not (unfinished / "inbox").exists()


@pytest.mark.parametrize("target_name", STORAGE)
def test_resume_runs_an_interrupted_experiment_from_its_uri_alone(
    tmp_path: Path,
    target_name: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`run --storage-path URI` interrupted, then `resume URI` on a machine
    with no staging directory: the trials finish and the stored log says so."""
    target: StorageTarget = request.getfixturevalue(target_name)
    INTERRUPTED_ONCE.clear()
    common = ["--executor", "in_process", "--name", "exp", "--verbose", "0"]
    trainable = "tests.test_cli:interrupts_once"
    assert main(["run", trainable, "--storage-path", target.uri, *common]) == 130
    hint = re.search(r"Continue it with: (.*)$", capsys.readouterr().out, re.MULTILINE)
    assert hint is not None
    # What the hint names: the stored directory (a local path for file://,
    # as Ray's results name it), or the URI without its credentials (one
    # argument for a shell: its query's `&` quoted).
    shown = target.store.local_path("exp") or target.experiment_uri("exp")
    words = shlex.split(hint.group(1))
    assert words == ["tunecore", "resume", shown.replace("testing:testing@", ""), "--trainable",
                     trainable]  # fmt: skip
    monkeypatch.setenv("TUNECORE_STAGING", str(tmp_path / "another_machine"))
    uri = target.experiment_uri("exp")  # with the credentials, as the user holds them
    location = words[2] if target_name == "file_store" else uri
    assert main(["resume", location, "--trainable", trainable]) == 0
    assert main(["status", location]) == 0
    out = capsys.readouterr().out
    assert ": TERMINATED, " in out
    assert "the experiment has finished." in out


def test_resume_of_a_uri_with_nothing_there_exits_with_2_naming_it(
    file_store: StorageTarget, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = f"{file_store.uri}/nowhere"
    assert main(["resume", missing, "--trainable", "tests.test_cli:quadratic"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "/nowhere" in error


def test_transitions_prints_the_table_or_its_graph(capsys: pytest.CaptureFixture[str]) -> None:
    from tunecore.core import format_transitions, transitions_dot  # noqa: PLC0415

    assert main(["transitions"]) == 0
    assert capsys.readouterr().out.strip() == format_transitions()
    assert main(["transitions", "--dot"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("digraph trial_lifecycle {")
    assert out.strip() == transitions_dot()


def test_after_ctrl_c_the_summary_says_interrupted_not_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, "interrupts", "--num-samples", "3", "--verbose", "1") == 130
    out = capsys.readouterr().out
    assert "Experiment finished" not in out
    assert "Experiment interrupted: 3 trials (3 PENDING); 3 not finished." in out
    assert f"Resume it with: tunecore resume {tmp_path / 'exp'} --trainable" in out
