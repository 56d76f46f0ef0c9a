"""A finished trial's spec keeps its config and evaluated params packed
(`model.trial.packed_spec`): `spec.config` and `spec.evaluated_params`
read back as the very dicts they were, values of the same types, whatever
a config holds; a snapshot stores the same bytes; a config that would not
read back as itself (a tuple, a numpy scalar, an enum, an object msgpack
cannot encode) stays the dict it was."""

from __future__ import annotations

import enum
import math
from typing import Any

import msgspec
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.core.test_packed_result import same
from tests.strategies import json_dicts, specs
from tunecore.model import TrialSpec, TrialState, TrialStatus
from tunecore.model.codec import from_msgpack, to_msgpack
from tunecore.model.packed import PackedMap, round_trips
from tunecore.model.trial import packed_spec

FINISHED = st.sampled_from([TrialStatus.TERMINATED, TrialStatus.ERROR])


class Color(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    LOW = 1


class Opaque:
    """An object msgpack cannot encode."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque)

    __hash__ = object.__hash__


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.integers(2**64, 2**70),  # beyond msgpack: the config stays a dict
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.text(max_size=6),
    st.just("\ud800"),  # a lone surrogate: not UTF-8
    st.builds(np.float64, st.floats(allow_nan=False, width=64)),
    st.builds(np.int64, st.integers(-(2**63), 2**63 - 1)),
    st.builds(np.bool_, st.booleans()),
    st.sampled_from([Color.RED, Level.LOW]),
    st.builds(Opaque),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=6), children, max_size=3),
        st.dictionaries(st.integers(0, 3), children, max_size=2),  # keys msgpack holds, not str
    ),
    max_leaves=8,
)
configs = st.dictionaries(st.text(max_size=8), values, max_size=4)


def exactly(a: object, b: object) -> bool:
    """`same`, and tuples, numpy scalars and objects compared by type and value."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(exactly(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(exactly(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(exactly(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and type(a) is not float:
        return same(float(a), float(b))
    return same(a, b)  # type: ignore[arg-type]


def finished(spec: TrialSpec, status: TrialStatus = TrialStatus.TERMINATED) -> TrialState:
    return TrialState(spec=spec, status=status, recorded_result={"loss": 1.0})


@given(config=configs, evaluated=configs, share=st.booleans(), status=FINISHED)
def test_a_finished_trial_reads_any_config_as_the_dict_it_was(
    config: dict[str, object], evaluated: dict[str, object], share: bool, status: TrialStatus
) -> None:
    spec = TrialSpec(
        trial_id="t0",
        trainable_name="f",
        config=config,  # type: ignore[arg-type]
        evaluated_params=config if share else evaluated,  # type: ignore[arg-type]
    )
    state = finished(spec, status)
    assert exactly(state.spec.config, config)
    assert exactly(state.spec.evaluated_params, config if share else evaluated)
    assert type(state.spec.config) is dict
    kept = msgspec.structs.asdict(state.spec)  # the slots themselves
    packs = bool(config) and round_trips(config)
    assert (type(kept["config"]) is PackedMap) == packs
    if not packs:
        assert kept["config"] is config  # kept as it was given
    if share and packs:
        assert kept["evaluated_params"] is kept["config"]  # one packed map for both


@given(spec=specs, status=FINISHED)
def test_a_finished_trial_stores_its_spec_as_the_plain_spec_did(
    spec: TrialSpec, status: TrialStatus
) -> None:
    state = finished(spec, status)
    packed = type(msgspec.structs.asdict(state.spec)["config"]) is PackedMap
    assert packed == bool(spec.config)  # an empty config is omitted, as before
    assert to_msgpack(state.spec) == to_msgpack(spec)  # byte for byte
    plain = msgspec.structs.replace(state)
    msgspec.structs.force_setattr(plain, "spec", spec)
    assert to_msgpack(state) == to_msgpack(plain)
    decoded = from_msgpack(to_msgpack(state), TrialState)
    assert decoded == state  # decoded, it is packed again, the same bytes
    assert to_msgpack(decoded) == to_msgpack(state)
    assert same(decoded.spec.config, spec.config)


@given(config=json_dicts)
def test_a_running_trial_keeps_its_config_dict(config: dict[str, object]) -> None:
    spec = TrialSpec(trial_id="t0", trainable_name="f", config=config)  # type: ignore[arg-type]
    running = TrialState(spec=spec, status=TrialStatus.RUNNING)
    assert running.spec is spec
    assert running.spec.config is config
    assert packed_spec(packed_spec(spec)) == packed_spec(spec)  # packing twice changes nothing


def test_a_config_of_objects_msgpack_cannot_encode_works_as_before() -> None:
    opaque = Opaque()
    config: dict[str, Any] = {"model": opaque, "lr": 0.1}
    state = finished(TrialSpec(trial_id="t0", trainable_name="f", config=config))
    read: dict[str, Any] = state.spec.config
    assert read is config
    assert read["model"] is opaque


def test_a_packed_spec_shows_its_config_as_the_map() -> None:
    state = finished(TrialSpec(trial_id="t0", trainable_name="f", config={"lr": 0.5}))
    assert "config=PackedMap({'lr': 0.5})" in repr(state.spec)


def test_round_trips_refuses_what_msgpack_changes() -> None:
    assert round_trips({"a": [1, 2.5, None, True, "x", {"b": []}]})
    assert not round_trips({"a": (1, 2)})
    assert not round_trips({"a": np.float64(1.0)})
    assert not round_trips({"a": Level.LOW})
    assert not round_trips({1: "int key"})
    assert not round_trips({"a": 2**64})
    assert not round_trips({"a": "\ud800"})
    assert round_trips({"a": 2**64 - 1, "b": -(2**63), "c": math.nan})


@given(config=json_dicts)
def test_a_restarted_trial_has_its_config_dict_again(config: dict[str, object]) -> None:
    spec = TrialSpec(trial_id="t0", trainable_name="f", config=config)  # type: ignore[arg-type]
    errored = finished(spec, TrialStatus.ERROR)
    restarted = msgspec.structs.replace(errored, status=TrialStatus.PENDING)
    kept = msgspec.structs.asdict(restarted.spec)
    assert type(kept["config"]) is dict
    assert type(kept["evaluated_params"]) is dict
    assert restarted.spec == spec  # the state a snapshot decodes
    assert same(restarted.spec.config, config)  # type: ignore[arg-type]
