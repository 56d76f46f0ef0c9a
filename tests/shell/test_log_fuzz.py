"""Fuzzing a real experiment's event log and snapshots (issue 10).

Each example damages a copy of one real experiment (run in-process, crashed
once and resumed, so its log holds an `ExperimentResumed` and two
snapshots): bit flips, inserted and deleted bytes, truncations, and records
re-framed with a valid checksum but a field of the wrong type. Then replay
(verifying the snapshots) and the resume's read (`load_experiment`: the
newest snapshot, then the events after it) read it. Every outcome must be

- a clean read whose state is the original's (or, for a log cut at a
  record boundary, the original's after those records),
- a torn tail, only when the damage is in the last record, with the state
  of the records before it,
- or a `LogError`, a `CorruptLogError` naming its byte offset;

never another exception, a hang, or a state the original never had. A
damaged snapshot is ignored or matches. The state is compared with the
original's, worked out by feeding its events to `step` here.

The examples are derandomized and nothing is stored between runs, so the
suite is deterministic. `TUNECORE_FUZZ_EXAMPLES=N` runs N examples per test
and prints how many ended each way (the figures in docs/reliability.md).
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import struct
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.api.loader import load_experiment
from tunecore.cli import main
from tunecore.core.experiment import ExperimentState, step
from tunecore.core.experiment.snapshot import decode_state, encode_state
from tunecore.model import Rejection
from tunecore.schedulers import ASHAScheduler
from tunecore.shell.callbacks import Callback
from tunecore.shell.eventlog import CorruptLogError, LogError, read_log
from tunecore.shell.replay import Replayed, replay

_PREAMBLE = 20  # magic (16 bytes) + format (u32)
_FRAME = struct.Struct("<II")  # length, crc32
_SNAPSHOT_CRC = struct.Struct("<I")
EXAMPLES = int(os.environ.get("TUNECORE_FUZZ_EXAMPLES", "0"))
OUTCOMES: collections.Counter[str] = collections.Counter()


class Crash(BaseException):
    """Not an Exception: callbacks' errors are contained, this one is not."""


class CrashAfter(Callback):
    """Kills the driver after `results` results: the resume that follows
    puts an `ExperimentResumed` and a second snapshot in the log."""

    def __init__(self, results: int) -> None:
        self.left = results

    def on_trial_result(
        self, iteration: int, trials: object, trial: object, result: object
    ) -> None:
        self.left -= 1

    def on_step_end(self, iteration: int, trials: object) -> None:
        if self.left <= 0:
            raise Crash


def train(config: dict[str, float]) -> None:
    for step_ in range(1, 5):
        tunecore.report({"loss": config["x"] / step_})


class Original:
    """The undamaged experiment (a plain class: Hypothesis would print a
    dataclass's bytes in full)."""

    def __init__(
        self,
        directory: Path,
        log: bytes,
        starts: list[int],
        states: list[bytes],
        snapshots: dict[str, bytes],
    ) -> None:
        self.directory = directory
        self.log = log
        self.starts = starts  # where each record starts: 0 is the header
        self.states = states  # the encoded state after each number of events
        self.snapshots = snapshots

    @property
    def events(self) -> int:
        return len(self.starts) - 1

    def __repr__(self) -> str:
        return f"Original({self.events} events, {len(self.log)} bytes)"


def _run(directory: Path, callbacks: list[Callback]) -> None:
    Tuner(
        train,
        param_space={"x": tunecore.grid_search([1.0, 2.0, 3.0])},
        tune_config=TuneConfig(
            metric="loss", mode="min", scheduler=ASHAScheduler(max_t=4, grace_period=1)
        ),
        run_config=RunConfig(
            name=directory.name,
            storage_path=str(directory.parent),
            verbose=0,
            executor="in_process",
            callbacks=callbacks,
        ),
    ).fit()


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Original]:
    directory = tmp_path_factory.mktemp("fuzz") / "exp"
    with pytest.raises(Crash):
        _run(directory, [CrashAfter(results=4)])
    Tuner.restore(directory, trainable=train).fit()
    log = (directory / "events.log").read_bytes()
    contents = read_log(directory)
    state = decode_state(contents.header.initial_state)
    states = [encode_state(state)]
    for event in contents.events:
        outcome = step(state, event)
        if not isinstance(outcome, Rejection):
            state = outcome[0]
        states.append(encode_state(state))
    snapshots = {p.name: p.read_bytes() for p in (directory / "snapshots").iterdir()}
    assert len(snapshots) == 2
    assert contents.torn is None
    yield Original(directory, log, _record_starts(log), states, snapshots)
    if EXAMPLES:
        print(f"\nOutcomes of {sum(OUTCOMES.values())} mutations:")
        for ending, count in sorted(OUTCOMES.items()):
            print(f"  {ending}: {count}")


def _record_starts(log: bytes) -> list[int]:
    starts, offset = [], _PREAMBLE
    while offset < len(log):
        starts.append(offset)
        length, _ = _FRAME.unpack_from(log, offset)
        offset += _FRAME.size + length
    return starts


def _framed(payload: bytes) -> bytes:
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


# -- mutations -------------------------------------------------------------------


@dataclass(frozen=True)
class Damage:
    """What a mutation did: where the first changed byte is, and whether
    it only cut the end off (which a crash can do too)."""

    kind: str
    at: int
    cuts_the_end: bool = False


Mutation = Callable[[bytes], tuple[bytes, Damage]]


@dataclass(frozen=True)
class ByteMutation:
    """A flip of one bit, bytes inserted or deleted, or the end cut off, at
    the fraction `where` of the file."""

    kind: str
    where: float
    bit: int = 0
    inserted: bytes = b""
    length: int = 1

    def __call__(self, data: bytes) -> tuple[bytes, Damage]:
        at = int(self.where * len(data))
        if self.kind == "flip":
            flipped = bytes([data[at] ^ (1 << self.bit)])
            return data[:at] + flipped + data[at + 1 :], Damage(self.kind, at)
        if self.kind == "insert":
            return data[:at] + self.inserted + data[at:], Damage(self.kind, at)
        if self.kind == "delete":
            cuts = at + self.length >= len(data)
            return data[:at] + data[at + self.length :], Damage(self.kind, at, cuts_the_end=cuts)
        return data[:at], Damage(self.kind, at, cuts_the_end=True)


def byte_mutations() -> st.SearchStrategy[ByteMutation]:
    return st.builds(
        ByteMutation,
        kind=st.sampled_from(["flip", "insert", "delete", "truncate"]),
        where=st.floats(0, 1, exclude_max=True),
        bit=st.integers(0, 7),
        inserted=st.binary(min_size=1, max_size=8),
        length=st.integers(1, 16),
    )


def _wrong_value(original: object, choice: int) -> object:
    """A value of another type than `original`'s (never None, which an
    optional field would take, nor anything JSON could hold, where the
    original is None)."""
    if isinstance(original, str):
        options: list[object] = [7, [], {"a": 1}, b"x", True]
    elif isinstance(original, bool):
        options = ["yes", [], {}, b"x"]
    elif isinstance(original, int | float):
        options = ["7", [], {}, b"x"]
    elif isinstance(original, bytes):
        options = ["x", 7, [], {}]
    elif isinstance(original, dict):
        options = ["x", 7, [1], b"x"]
    elif isinstance(original, list):
        options = ["x", 7, {}, b"x"]
    else:  # None: an optional field, which takes a value of its type too
        options = [b"x", [[b"x"]]]
    return options[choice % len(options)]


_JSON_FIELDS = frozenset({"result", "config", "values", "metrics"})
"""Fields of JSON values, where any value is of the right type."""


def _mutate_fields(value: dict[str, object], choices: list[int]) -> None:
    """Give one typed field (top level, or one level down in a struct, or
    a key of the state encoded in `initial_state`) a wrong type, or the
    record an unknown type tag."""
    keys = sorted(value)
    key = keys[choices[0] % len(keys)]
    inner = value[key]
    if key == "type":
        value[key] = "NoSuchEvent"
    elif key == "initial_state" and isinstance(inner, bytes) and choices[1] % 2:
        state = msgspec.msgpack.decode(inner)
        _mutate_fields(state, choices[2:])
        value[key] = msgspec.msgpack.encode(state)
    elif isinstance(inner, dict) and inner and key not in _JSON_FIELDS and choices[1] % 2:
        _mutate_fields(inner, choices[2:])
    else:
        value[key] = _wrong_value(inner, choices[1])


def _too_deep(value: dict[str, object], key: str, inner: str | None = None) -> bytes:
    """`value` encoded with 100,000 nested lists in place of `value[key]`
    (or of `value[key][inner]`)."""
    value[key] = "SENTINEL" if inner is None else {inner: "SENTINEL"}
    return msgspec.msgpack.encode(value).replace(
        msgspec.msgpack.encode("SENTINEL"), b"\x91" * 100_000 + b"\x00"
    )


@dataclass(frozen=True)
class FieldMutation:
    """A record (at the fraction `where` of them) re-framed with a valid
    checksum but a field of the wrong type, or nested deeper than any
    decoder follows."""

    where: float
    choices: tuple[int, ...]
    deep: bool

    def __call__(self, data: bytes) -> tuple[bytes, Damage]:
        starts = _record_starts(data)
        start = starts[int(self.where * len(starts))]
        length, _ = _FRAME.unpack_from(data, start)
        end = start + _FRAME.size + length
        value = msgspec.msgpack.decode(data[start + _FRAME.size : end])
        if self.deep:  # inside a JSON value if there is one: only there may lists nest
            keys = sorted(value)
            json = [k for k in keys if k in _JSON_FIELDS and isinstance(value[k], dict)]
            key = (json or keys)[self.choices[0] % len(json or keys)]
            payload = _too_deep(value, key, "deep" if json else None)
        else:
            _mutate_fields(value, list(self.choices))
            payload = msgspec.msgpack.encode(value)
        return data[:start] + _framed(payload) + data[end:], Damage("field", start)


_CHOICES = st.tuples(*[st.integers(0, 1000)] * 8)


def field_mutations() -> st.SearchStrategy[FieldMutation]:
    return st.builds(
        FieldMutation,
        where=st.floats(0, 1, exclude_max=True),
        choices=_CHOICES,
        deep=st.booleans(),
    )


# -- reading, with a guard against hangs -------------------------------------------


class Hang(Exception):
    pass


@contextlib.contextmanager
def hang_guard(seconds: int = 20) -> Iterator[None]:
    def expired(_signum: int, _frame: FrameType | None) -> None:
        raise Hang(f"reading took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def damaged_copy(
    original: Original, log: bytes, snapshots: dict[str, bytes] | None = None
) -> Iterator[Path]:
    """A copy of the experiment with `log`, and `snapshots` (default: the
    original's)."""
    with tempfile.TemporaryDirectory() as parent:
        directory = Path(parent) / "exp"
        (directory / "snapshots").mkdir(parents=True)
        (directory / "events.log").write_bytes(log)
        for name, data in (original.snapshots if snapshots is None else snapshots).items():
            (directory / "snapshots" / name).write_bytes(data)
        yield directory


def _read(
    read: Callable[[], Replayed | ExperimentState],
) -> Replayed | ExperimentState | LogError:
    """What `read` returned, or the `LogError` it raised; anything else it
    raises fails the test."""
    try:
        with hang_guard():
            return read()
    except LogError as error:
        return error


def _names_its_offset(outcome: object) -> None:
    if isinstance(outcome, CorruptLogError):
        assert f"offset {outcome.offset}" in str(outcome)


def _judge(original: Original, damage: Damage, records: int, torn: bool) -> str:
    """Check what a read that returned kept (see the module docstring)."""
    damaged = -1  # the preamble
    if damage.at >= _PREAMBLE:
        damaged = max(i for i, start in enumerate(original.starts) if start <= damage.at)
    if torn:
        assert damage.cuts_the_end or damaged == original.events, (
            f"a torn tail after {damage}, which is in record {damaged}, not the last"
        )
    if torn or records != original.events:
        assert damage.cuts_the_end or torn, f"{records} of {original.events} events after {damage}"
        assert records == damaged - 1, f"{records} events kept after {damage}"
    return "torn tail" if torn else "clean"


# -- the fuzz --------------------------------------------------------------------


def _settings(examples: int) -> settings:
    return settings(
        max_examples=EXAMPLES or examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@_settings(150)
@given(
    mutation=st.one_of(byte_mutations(), field_mutations()),
    snapshots=st.sampled_from(["both", "older", "none"]),
)
def test_a_damaged_log_reads_clean_torn_or_as_a_typed_error(
    original: Original, mutation: Mutation, snapshots: str
) -> None:
    """With both snapshots the whole log is covered, so a cut anywhere is
    corruption; with the older one or none, a cut past it is a torn tail."""
    log, damage = mutation(original.log)
    older = min(original.snapshots)
    kept = {
        "both": original.snapshots,
        "older": {older: original.snapshots[older]},
        "none": {},
    }[snapshots]
    with damaged_copy(original, log, kept) as directory:
        replayed = _read(lambda: replay(directory, quiet=True))
        loaded = _read(lambda: load_experiment(directory).state)
    _names_its_offset(replayed)
    _names_its_offset(loaded)
    if isinstance(replayed, LogError):
        OUTCOMES[f"log, {damage.kind}: {type(replayed).__name__}"] += 1
    else:
        assert isinstance(replayed, Replayed)
        assert encode_state(replayed.state) == original.states[replayed.records], (
            f"replay accepted a state the original never had after {damage}"
        )
        torn = replayed.torn is not None
        OUTCOMES[f"log, {damage.kind}: {_judge(original, damage, replayed.records, torn)}"] += 1
    if isinstance(loaded, ExperimentState):
        # It may succeed where replay fails: it reads no initial state, and
        # checks no snapshot, when a newer snapshot is there.
        expected = (
            original.states
            if isinstance(replayed, LogError)
            else [original.states[replayed.records]]
        )
        assert encode_state(loaded) in expected, (
            f"the resume read accepted a state the original never had after {damage}"
        )


@dataclass(frozen=True)
class SnapshotFieldMutation:
    """A snapshot re-written with a valid checksum but a field of the
    wrong type (in the file's struct, or in the state it holds)."""

    choices: tuple[int, ...]

    def __call__(self, data: bytes) -> tuple[bytes, Damage]:
        body = msgspec.msgpack.decode(data[_SNAPSHOT_CRC.size :])
        key = sorted(body)[self.choices[0] % len(body)]
        if key == "state" and self.choices[1] % 2:
            state = msgspec.msgpack.decode(body[key])
            _mutate_fields(state, list(self.choices[2:]))
            body[key] = msgspec.msgpack.encode(state)
        else:
            body[key] = _wrong_value(body[key], self.choices[1])
        encoded = msgspec.msgpack.encode(body)
        return _SNAPSHOT_CRC.pack(zlib.crc32(encoded)) + encoded, Damage("field", 0)


def snapshot_mutations() -> st.SearchStrategy[tuple[int, Mutation]]:
    mutations = st.one_of(byte_mutations(), st.builds(SnapshotFieldMutation, _CHOICES))
    return st.tuples(st.integers(0, 1), mutations)


@_settings(60)
@given(mutation=snapshot_mutations())
def test_a_damaged_snapshot_is_ignored_or_matches(
    original: Original, mutation: tuple[int, Mutation]
) -> None:
    which, mutate = mutation
    name = sorted(original.snapshots)[which]
    damaged, damage = mutate(original.snapshots[name])
    with damaged_copy(original, original.log, {**original.snapshots, name: damaged}) as directory:
        loaded = _read(lambda: load_experiment(directory).state)
        replayed = _read(lambda: replay(directory, quiet=True))
    _names_its_offset(replayed)
    assert not isinstance(loaded, LogError), f"the resume read failed on a snapshot: {loaded}"
    assert isinstance(loaded, ExperimentState)
    assert encode_state(loaded) == original.states[-1], "the resume read adopted a damaged snapshot"
    if isinstance(replayed, LogError):
        OUTCOMES[f"snapshot, {damage.kind}: replay {type(replayed).__name__}"] += 1
    else:
        assert isinstance(replayed, Replayed)
        assert encode_state(replayed.state) == original.states[-1]
        OUTCOMES[f"snapshot, {damage.kind}: ignored or matching"] += 1


# -- the CLI and the API on a checksum-valid record of the wrong type ----------------


def _reframed(
    original: Original, record: int, change: Callable[[dict[str, object]], bytes]
) -> bytes:
    log = original.log
    start = original.starts[record]
    length, _ = _FRAME.unpack_from(log, start)
    end = start + _FRAME.size + length
    payload = change(msgspec.msgpack.decode(log[start + _FRAME.size : end]))
    return log[:start] + _framed(payload) + log[end:]


def _deep_result(event: dict[str, object]) -> bytes:
    return _too_deep(event, "result", "loss")


def _newer_initial_state(header: dict[str, object]) -> bytes:
    initial = header["initial_state"]
    assert isinstance(initial, bytes)
    state = msgspec.msgpack.decode(initial)
    state["format"] = 99
    header["initial_state"] = msgspec.msgpack.encode(state)
    return msgspec.msgpack.encode(header)


def _first_result(original: Original) -> int:
    for number in range(1, len(original.starts)):
        start = original.starts[number] + _FRAME.size
        if (
            msgspec.msgpack.decode(original.log[start : original.starts[number + 1]])["type"]
            == "ResultReported"
        ):
            return number
    raise AssertionError("the experiment reported no result")


@pytest.mark.parametrize("command", ["status", "replay", "resume"])
def test_the_cli_exits_4_without_a_traceback_on_a_record_nested_too_deeply(
    original: Original, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _first_result(original)
    log = _reframed(original, record, _deep_result)
    with damaged_copy(original, log) as directory:
        extra = ["--trainable", f"{__name__}:train"] if command == "resume" else []
        code = main([command, str(directory), *extra])
        written = (directory / "events.log").read_bytes()
    error = capsys.readouterr().err
    assert code == 4
    assert error.startswith(f"tunecore {command}: error: ")
    assert f"record {record} at byte offset {original.starts[record]} is corrupt" in error
    assert "nested too deeply" in error
    assert "Traceback" not in error
    assert written == log  # nothing was cut


@pytest.mark.parametrize("command", ["status", "replay"])
def test_the_cli_exits_4_with_one_line_on_a_header_of_a_newer_snapshot_format(
    original: Original, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _reframed(original, 0, _newer_initial_state)
    with damaged_copy(original, log, {}) as directory:
        code = main([command, str(directory)])
    error = capsys.readouterr().err
    assert code == 4
    assert error.count("\n") == 1
    assert "Traceback" not in error
    assert f"record 0 at byte offset {_PREAMBLE} is corrupt" in error
    assert "format 99" in error


def test_restore_raises_a_typed_error_for_a_header_with_nonsense_settings(
    original: Original,
) -> None:
    def nonsense(header: dict[str, object]) -> bytes:
        header["settings"] = {"executor": "ray", "result_buffer_length": -3}
        return msgspec.msgpack.encode(header)

    with (
        damaged_copy(original, _reframed(original, 0, nonsense)) as directory,
        pytest.raises(CorruptLogError, match=r"result_buffer_length") as raised,
    ):
        Tuner.restore(directory, trainable=train)
    assert raised.value.record == 0
    assert raised.value.offset == _PREAMBLE


def test_a_header_claiming_a_newer_format_than_its_preamble_is_corrupt(
    original: Original,
) -> None:
    def newer(header: dict[str, object]) -> bytes:
        header["format"] = 99
        return msgspec.msgpack.encode(header)

    with (
        damaged_copy(original, _reframed(original, 0, newer)) as directory,
        pytest.raises(CorruptLogError, match=r"format 99, the preamble at most 1"),
    ):
        replay(directory)


def test_an_event_time_no_clock_can_show_is_corrupt(original: Original) -> None:
    record = _first_result(original)

    def far_future(event: dict[str, object]) -> bytes:
        event["at"] = 1e300  # formatting it for error.txt raised OverflowError
        return msgspec.msgpack.encode(event)

    with (
        damaged_copy(original, _reframed(original, record, far_future)) as directory,
        pytest.raises(CorruptLogError, match=r"ResultReported.at=1e\+300") as raised,
    ):
        replay(directory)
    assert raised.value.offset == original.starts[record]
