"""`model.packed`: a map packed behind its shared key tuple reads back as the
map it was and encodes to the very bytes that map encodes to; it cannot be
written in its private form, and it survives a pickle into a process whose
table of shapes differs."""

from __future__ import annotations

import contextlib
import math
import pickle
import subprocess
import sys
from collections.abc import Iterator

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.core.test_packed_result import same
from tests.strategies import json_dicts, specs
from tunecore.model import JsonValue, MetricStats, TrialState, TrialStatus
from tunecore.model import packed as packed_module
from tunecore.model.codec import from_msgpack, to_json, to_msgpack
from tunecore.model.packed import PackedMap, pack

ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, width=64)
numbers = ANY_FLOAT | st.integers(-(2**63), 2**64 - 1)
maps = st.dictionaries(st.text(max_size=8), numbers) | json_dicts


@given(mapping=maps)
def test_a_packed_map_reads_and_encodes_as_the_map_it_was(mapping: dict[str, JsonValue]) -> None:
    packed = pack(mapping)
    assert packed is not None
    assert same(packed.unpacked(), mapping)  # type: ignore[arg-type]
    assert packed.keys() == tuple(mapping)
    assert to_msgpack(packed) == to_msgpack(mapping)  # byte for byte
    assert to_msgpack({"nested": [packed]}) == to_msgpack({"nested": [mapping]})
    if not any(isinstance(v, float) and not math.isfinite(v) for v in mapping.values()):
        assert to_json(packed) == to_json(mapping)


@given(mapping=maps)
def test_equal_maps_pack_equal_and_a_changed_value_does_not(
    mapping: dict[str, JsonValue],
) -> None:
    first, second = pack(mapping), pack(dict(mapping))
    assert first == second
    assert hash(first) == hash(second)
    if mapping:
        key = next(iter(mapping))
        changed = pack({**mapping, key: [mapping[key]]})
        assert changed != first


def test_maps_of_the_same_keys_share_one_key_tuple() -> None:
    first = pack({"loss": 0.5, "training_iteration": 1, "trial_id": "a_00000"})
    second = pack({"loss": 0.25, "training_iteration": 7, "trial_id": "a_00001"})
    assert first is not None
    assert second is not None
    assert first.keys() is second.keys()
    assert first[: packed_module.SHAPE_BYTES] == second[: packed_module.SHAPE_BYTES]
    assert first.find(b"training_iteration") == -1  # the keys are not in its bytes


def test_an_encoder_without_the_hook_refuses_a_packed_map() -> None:
    # No encoder can write the private form (shape index and values) by
    # mistake: only model.codec's, whose hook writes the map, encode it.
    packed = pack({"loss": 1.0})
    with pytest.raises(TypeError, match="PackedMap"):
        msgspec.msgpack.encode(packed)
    with pytest.raises(TypeError, match="PackedMap"):
        msgspec.json.encode({"last_result": packed})
    with pytest.raises(TypeError, match="unsupported"):
        to_msgpack(object())


def test_a_pickled_packed_map_is_rebuilt_against_the_other_process_table() -> None:
    packed = pack({"loss": 0.5, "only_here": "x", "n": 3})
    other = (
        "import pickle, sys\n"
        "from tunecore.model.packed import pack\n"
        "for n in range(5):\n"  # other shapes first: indices differ there
        "    pack({f'k{i}': i for i in range(n)})\n"
        "value = pickle.loads(sys.stdin.buffer.read())\n"
        "print(type(value).__name__, value.unpacked())\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", other],
        input=pickle.dumps(packed),
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert shown.strip() == "PackedMap {'loss': 0.5, 'only_here': 'x', 'n': 3}"
    assert pickle.loads(pickle.dumps(packed)) == packed


@contextlib.contextmanager
def table_full() -> Iterator[None]:
    """This process's table of shapes full while it lasts: no new shape fits."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(packed_module, "MAX_SHAPES", len(packed_module._SHAPES))
        yield


@given(spec=specs, result=json_dicts)
def test_with_the_table_full_a_new_shape_is_kept_as_its_msgpack(
    spec: object, result: dict[str, JsonValue]
) -> None:
    result = {**result, "a key no other test reports": 1}
    with table_full():
        assert pack(result) is None
        state = TrialState(
            spec=spec,  # type: ignore[arg-type]
            status=TrialStatus.TERMINATED,
            recorded_result=result,
            recorded_stats={"loss": MetricStats(1.0, 0.0, 0.5, 0.0)},
        )
        assert isinstance(state.recorded_result, msgspec.Raw)
        assert same(state.last_result, result)
        encoded = to_msgpack(state)
        assert from_msgpack(encoded, TrialState) == state
        assert to_msgpack(from_msgpack(encoded, TrialState)) == encoded


def test_with_the_table_full_a_pickled_packed_map_arrives_as_its_map() -> None:
    values = msgspec.msgpack.encode([1, "two"])
    with table_full():
        rebuilt = packed_module._repacked(("one", "a new pair of keys"), values)
    assert rebuilt == {"one": 1, "a new pair of keys": "two"}


def test_packed_map_is_a_bytes_subclass_of_one_allocation() -> None:
    packed = pack({"loss": 0.5})
    assert isinstance(packed, PackedMap)
    assert not hasattr(packed, "__dict__")
