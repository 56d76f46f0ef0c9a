"""Fuzzing the event log as storage holds it: `events/seg_<start>_<end>`
objects (issue 37).

A real log is shipped in pieces (`StateShipper`), then each example
mutates the stored objects the way storage or a person can: drop one,
duplicate one's bytes under another range, reorder (swap two objects'
bytes), add one overlapping others, truncate one, flip a bit, zero a run
of bytes, or grow one; or the way a stale driver does (`stale`): another
driver took the log over at an object's start (its fence, its objects
after it), and the stale one's object lands after, from anywhere, with
its own bytes past the fence. The stored log is then read the way every
reader reads it (`fetch_log`, then `read_log`). A `stale` mutation must
read as the whole log; every other outcome must be

- the whole log, or a shorter one that a killed shipper leaves (the last
  objects missing: a prefix at a record boundary, no torn tail),
- a log of whole records only (storage never holds a torn tail, so none
  is ever dropped silently) whose events are the original's, or, where
  the mutation only moved whole records around (duplicate, reorder,
  overlap), checksum-valid records of the original's in another order
  (only a signature could tell; `replay` checks the result),
- or a `LogError` (`CorruptLogError` naming the offset);

never another exception. `TUNECORE_FUZZ_EXAMPLES=N` runs N examples and
prints how many ended each way.
"""

from __future__ import annotations

import collections
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.shell.test_shipper import Staging
from tunecore.shell.eventlog import CorruptLogError, LogError, read_log
from tunecore.shell.mirror.claims import SEGMENT_DIR, fence_name
from tunecore.shell.mirror.shipper import StateShipper
from tunecore.shell.mirror.stored_state import fetch_log, segment_name
from tunecore.shell.storage.local_store import LocalStore

EXAMPLES = int(os.environ.get("TUNECORE_FUZZ_EXAMPLES", "0"))
OUTCOMES: collections.Counter[str] = collections.Counter()
TRIED: collections.Counter[str] = collections.Counter()
Args = tuple[int, int, int, int, int]
"""A mutation's index, other index, position, length and bit."""
KINDS = ("drop", "duplicate", "reorder", "overlap", "truncate", "flip", "zero", "grow", "stale")
MOVES = frozenset({"duplicate", "reorder", "overlap"})


@dataclass(frozen=True)
class Original:
    log: bytes
    objects: dict[tuple[int, int], bytes]
    events: list[object]
    ends: list[int]


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Original]:
    root = tmp_path_factory.mktemp("stored")
    staging = Staging(root / "staging" / "exp")
    store = LocalStore(str(root / "storage"))
    ship = StateShipper(store, staging.dir, staging.size, lag_s=0.01)
    for count in (1, 3, 2, 5, 1, 4):
        staging.append(count)
        ship.tick()
    staging.writer.close()
    log = staging.log()
    objects = {}
    for name in store.list(SEGMENT_DIR):
        _, start, end = name.split("_")
        objects[int(start), int(end)] = store.read_bytes(f"{SEGMENT_DIR}/{name}")
    contents = read_log(staging.dir)
    yield Original(log, objects, list(contents.events), contents.ends)
    if EXAMPLES:
        print(f"\nOutcomes of {sum(OUTCOMES.values())} stored-log mutations:")
        for ending, count in OUTCOMES.most_common():
            print(f"  {ending}: {count}")
        print("  tried: " + ", ".join(f"{count} {kind}" for kind, count in TRIED.most_common()))


@st.composite
def mutations(draw: st.DrawFn, keys: list[tuple[int, int]], size: int) -> tuple[str, Args]:
    kind = draw(st.sampled_from(KINDS))
    index = draw(st.integers(0, len(keys) - 1))
    other = draw(st.integers(0, len(keys) - 1))
    start = draw(st.integers(0, size - 1))
    length = draw(st.integers(1, max(1, size // 3)))
    bit = draw(st.integers(0, 7))
    return kind, (index, other, start, length, bit)


def mutate(original: Original, kind: str, args: Args) -> dict[str, bytes]:
    """The stored objects after the mutation, by name."""
    if kind == "stale":
        return taken_over(original, args)
    objects = dict(original.objects)
    keys = sorted(objects)
    index, other, at, length, bit = args
    key = keys[index]
    data = objects[key]
    if kind == "drop":
        del objects[key]
    elif kind == "duplicate":  # its bytes again, right after the log's end
        end = keys[-1][1]
        objects[end, end + len(data)] = data
    elif kind == "reorder":  # two objects swap their bytes
        objects[key], objects[keys[other]] = objects[keys[other]], data
    elif kind == "overlap":  # one more object over the log's own bytes
        start = min(at, len(original.log) - 1)
        end = min(len(original.log), start + length)
        objects[start, end] = original.log[start:end]
    elif kind == "truncate":
        objects[key] = data[: max(0, len(data) - 1 - at % len(data))]
    elif kind == "flip":
        position = at % len(data)
        objects[key] = data[:position] + bytes([data[position] ^ 1 << bit]) + data[position + 1 :]
    elif kind == "zero":
        position = at % len(data)
        objects[key] = (
            data[:position] + bytes(min(length, len(data) - position)) + data[position + length :]
        )
    else:  # grow
        objects[key] = data + bytes(length)
    return {segment_name(start, end): data for (start, end), data in objects.items()}


def taken_over(original: Original, args: Args) -> dict[str, bytes]:
    """Driver 2 took the log over at the start of object `index` and
    shipped the rest; driver 1's object then lands at `at`, its bytes the
    log's up to the fence (it wrote the same log until then) and its own
    after it."""
    index, _other, at, length, bit = args
    fence = sorted(original.objects)[index][0]
    stored = {fence_name(2, fence): b""}
    for (start, end), data in original.objects.items():
        stored[segment_name(start, end, 0 if start < fence else 2)] = data
    start = at % len(original.log)
    own = bytes([0xA5 ^ 1 << bit]) * length
    stale = original.log[start:fence] + own
    stored[segment_name(start, start + len(stale), 1)] = stale
    return stored


def outcome(original: Original, kind: str, args: Args, directory: Path) -> str:
    store = LocalStore(str(directory / "storage"))
    for name, data in mutate(original, kind, args).items():
        store.write_bytes(name, data)
    target = directory / "fetched" / "events.log"
    target.parent.mkdir(parents=True)
    try:
        size = fetch_log(store, target)
        contents = read_log(target.parent)
    except CorruptLogError as error:
        return f"CorruptLogError naming the offset{'' if error.offset >= 0 else ' (NONE)'}"
    except LogError:
        return "LogError (a damaged preamble or header)"
    fetched = target.read_bytes()
    assert size == len(fetched)
    assert contents.torn is None, "a stored log was read with a torn tail"
    assert kind != "stale" or fetched == original.log, "a stale driver's object was read"
    if fetched == original.log:
        return "the whole log"
    if original.log.startswith(fetched):
        assert len(fetched) in original.ends, "cut inside a record"
        assert kind in ("drop", "overlap"), f"{kind} read as a shorter log"
        return "a shorter log, as a killed shipper leaves"
    if contents.events == original.events:
        return "the same events (a byte no check covers, the format field)"
    assert kind in MOVES, f"{kind} changed the events and was accepted"
    assert all(event in original.events for event in contents.events)
    return "whole records of the original, moved (no signature to tell)"


@settings(
    max_examples=EXAMPLES or 200,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_mutated_stored_log_reads_whole_shorter_or_as_a_typed_error(
    original: Original, data: st.DataObject
) -> None:
    keys = sorted(original.objects)
    kind, args = data.draw(mutations(keys, len(original.log)))
    TRIED[kind] += 1
    with tempfile.TemporaryDirectory() as scratch:
        OUTCOMES[outcome(original, kind, args, Path(scratch))] += 1


def test_dropping_a_middle_object_is_a_gap_at_its_offset(original: Original) -> None:
    keys = sorted(original.objects)
    for index in range(len(keys) - 1):
        with tempfile.TemporaryDirectory() as scratch:
            store = LocalStore(str(Path(scratch) / "storage"))
            for name, data in mutate(original, "drop", (index, 0, 0, 1, 0)).items():
                store.write_bytes(name, data)
            with pytest.raises(CorruptLogError, match=rf"offset {keys[index][0]} .*gap"):
                fetch_log(store, Path(scratch) / "events.log")
