"""Every model value survives msgpack and JSON exactly, and decoding can
build nothing but the declared types: no pickle, no extension objects, no
class chosen by the payload."""

from __future__ import annotations

import math
import pickle
from typing import TypeVar

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import checkpoint_refs, json_dicts, locations, resources, specs
from tunecore.model import (
    CheckpointSaved,
    Command,
    DeleteCheckpoint,
    MetricStats,
    Resources,
    ResultReported,
    StartTrial,
    StopTrial,
    Tick,
    TrialEvent,
    TrialSpec,
    TrialStarted,
    TrialState,
)
from tunecore.model.codec import (
    UnsupportedExtensionError,
    from_json,
    from_msgpack,
    to_json,
    to_msgpack,
)

T = TypeVar("T")

events: st.SearchStrategy[TrialEvent] = st.one_of(
    st.builds(ResultReported, trial_id=st.just("t"), at=st.floats(0, 2e9), result=json_dicts),
    st.builds(
        CheckpointSaved, trial_id=st.just("t"), at=st.floats(0, 2e9), checkpoint=checkpoint_refs
    ),
    st.builds(TrialStarted, trial_id=st.just("t"), at=st.floats(0, 2e9), location=locations),
)
commands: st.SearchStrategy[Command] = st.one_of(
    st.builds(StartTrial, trial_id=st.just("t"), restore_from=st.none() | checkpoint_refs),
    st.builds(StopTrial, trial_id=st.just("t"), error=st.none() | st.text()),
    st.builds(DeleteCheckpoint, trial_id=st.just("t"), checkpoint=checkpoint_refs),
)
states = st.builds(
    TrialState,
    spec=specs,
    recorded_result=json_dicts,
    recorded_stats=st.dictionaries(
        st.text(max_size=5),
        st.builds(MetricStats, *[st.floats(allow_nan=False, allow_infinity=False)] * 4),
        max_size=3,
    ),
    unanalysed=st.lists(st.text(max_size=5), max_size=2).map(tuple),
    num_failures=st.integers(0, 10),
    location=locations,
)


def assert_round_trips(value: T, kind: object) -> None:
    packed = to_msgpack(value)
    assert from_msgpack(packed, kind) == value
    assert to_msgpack(from_msgpack(packed, kind)) == packed
    assert from_json(to_json(value), kind) == value


@given(states)
def test_trial_states_round_trip(state: TrialState) -> None:
    assert_round_trips(state, TrialState)


@given(events)
def test_events_round_trip_through_the_tagged_union(event: TrialEvent) -> None:
    assert_round_trips(event, TrialEvent)
    decoded = from_msgpack(to_msgpack(event), TrialEvent)
    assert type(decoded) is type(event)


@given(commands)
def test_commands_round_trip_through_the_tagged_union(command: Command) -> None:
    assert_round_trips(command, Command)


@given(resources)
def test_resources_round_trip(value: object) -> None:
    assert_round_trips(value, type(value))


def test_msgpack_keeps_nan_and_infinity_in_results() -> None:
    """JSON cannot hold them (msgspec writes null); the log is msgpack."""
    event = ResultReported(
        trial_id="t", at=1.0, result={"loss": math.nan, "grad": math.inf, "x": -math.inf}
    )
    decoded = from_msgpack(to_msgpack(event), ResultReported)
    loss = decoded.result["loss"]
    assert isinstance(loss, float)
    assert math.isnan(loss)
    assert decoded.result["grad"] == math.inf
    assert decoded.result["x"] == -math.inf
    assert to_msgpack(decoded) == to_msgpack(event)


class _Exploit:
    """Unpickling this would call `_record` -- decoding must never get there."""

    calls: list[str] = []  # noqa: RUF012 - a test probe, read after decoding

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (_Exploit.calls.append, ("code ran",))


def test_a_pickle_payload_is_rejected_without_running_code() -> None:
    payload = pickle.dumps(_Exploit())
    with pytest.raises(msgspec.DecodeError):
        from_msgpack(payload, TrialState)
    with pytest.raises(msgspec.DecodeError):
        from_json(payload, TrialState)
    assert _Exploit.calls == []


def test_a_pickle_hidden_in_a_config_stays_inert_bytes() -> None:
    """An untyped field decodes a bin value to plain bytes: data, never code."""
    raw = to_msgpack({"trial_id": "t", "trainable_name": "f", "config": {"x": b"\x80\x04"}})
    spec = from_msgpack(raw, TrialSpec)
    value: object = spec.config["x"]
    assert value == b"\x80\x04"


def test_msgpack_extension_types_are_refused() -> None:
    raw = to_msgpack(
        {
            "spec": {
                "trial_id": "t",
                "trainable_name": "f",
                "config": {"x": msgspec.msgpack.Ext(7, b"payload")},
            }
        }
    )
    with pytest.raises(UnsupportedExtensionError, match="extension type 7"):
        from_msgpack(raw, TrialState)


def test_the_payload_cannot_pick_a_class_outside_the_union() -> None:
    raw = to_json({"type": "os.system", "trial_id": "t", "at": 1.0})
    with pytest.raises(msgspec.ValidationError, match=r"Invalid value 'os.system' - at `\$.type`"):
        from_json(raw, TrialEvent)


def test_a_wrongly_typed_field_is_named_in_the_error() -> None:
    raw = to_json({"spec": {"trial_id": "t", "trainable_name": "f"}, "num_failures": "three"})
    with pytest.raises(
        msgspec.ValidationError, match=r"Expected `int`, got `str` - at `\$.num_failures`"
    ):
        from_json(raw, TrialState)


def test_struct_invariants_hold_on_decoding_too() -> None:
    raw = to_json({"spec": {"trial_id": "t", "trainable_name": "f", "max_failures": -5}})
    with pytest.raises(msgspec.ValidationError, match=r"TrialSpec.max_failures=-5"):
        from_json(raw, TrialState)


@pytest.mark.parametrize(
    "value",
    [
        Resources(cpu=1, gpu=2, custom={"tpu": 4}),
        TrialSpec(trial_id="t", trainable_name="f", stopping_criterion={"iteration": 10}),
        ResultReported(trial_id="t", at=5, result={"loss": 1}),
        Tick(at=7),
    ],
    ids=["resources", "stopping-criterion", "trial-event", "experiment-event"],
)
def test_ints_in_float_fields_encode_as_decoding_would(value: msgspec.Struct) -> None:
    """Constructed with ints or decoded from floats, the bytes are the same,
    so a replayed state equals the live one byte for byte."""
    packed = to_msgpack(value)
    assert to_msgpack(from_msgpack(packed, type(value))) == packed
