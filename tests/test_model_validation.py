"""Invariants the model structs enforce on construction and on decoding.

Every rejection is an `InvalidFieldError` whose message names the field and
the offending value, so a user can fix the input without reading our code.
"""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec
import pytest

from tunecore.model import (
    CheckpointPolicy,
    ExportFormat,
    InvalidFieldError,
    Location,
    Mode,
    Resources,
    TrialSpec,
    parse_export_formats,
)


def build_resources(**fields: Any) -> Resources:
    """Construct with values the annotations forbid, as untyped callers can."""
    return Resources(**fields)


def build_policy(**fields: Any) -> CheckpointPolicy:
    return CheckpointPolicy(**fields)


def build_spec(**fields: Any) -> TrialSpec:
    fields.setdefault("trial_id", "t1")
    fields.setdefault("trainable_name", "train_fn")
    return TrialSpec(**fields)


def assert_names(error: InvalidFieldError, field: str, value: object) -> None:
    """The message carries the field and the value as the user wrote it."""
    message = str(error)
    assert error.field == field
    assert field in message
    assert repr(value) in message


# --- Resources ---------------------------------------------------------------

BAD_AMOUNTS: list[object] = [-1, -0.5, math.nan, math.inf, -math.inf, True, False, "2", None]


@pytest.mark.parametrize("field", ["cpu", "gpu", "memory", "object_store_memory"])
@pytest.mark.parametrize("value", BAD_AMOUNTS, ids=repr)
def test_resources_rejects_bad_amounts(field: str, value: object) -> None:
    with pytest.raises(InvalidFieldError) as caught:
        build_resources(**{field: value})
    assert_names(caught.value, f"Resources.{field}", value)


@pytest.mark.parametrize("value", BAD_AMOUNTS, ids=repr)
def test_resources_rejects_bad_custom_amounts(value: object) -> None:
    with pytest.raises(InvalidFieldError) as caught:
        build_resources(custom={"accelerator_x": value})
    assert_names(caught.value, "Resources.custom['accelerator_x']", value)


def test_resources_rejects_an_unknown_strategy() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        Resources(strategy="SOMEWHERE")
    assert_names(caught.value, "Resources.strategy", "SOMEWHERE")


def test_resources_rejects_an_empty_custom_name() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        Resources(custom={"": 1.0})
    assert "Resources.custom" in caught.value.field
    assert "''" in str(caught.value)


def test_resources_rejects_a_custom_field_that_is_not_a_dict() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        build_resources(custom=[("x", 1.0)])
    assert_names(caught.value, "Resources.custom", [("x", 1.0)])


@pytest.mark.parametrize(
    "resources",
    [
        Resources(),
        Resources(cpu=0, gpu=0),
        Resources(cpu=0.5, gpu=2, custom={"accelerator_x": 0.25}),
    ],
    ids=repr,
)
def test_resources_accepts_finite_non_negative_amounts(resources: Resources) -> None:
    assert resources.cpu >= 0
    assert resources.gpu >= 0


def test_resources_defaults_are_one_cpu_and_no_gpu() -> None:
    assert Resources() == Resources(cpu=1.0, gpu=0.0, custom={})


@pytest.mark.parametrize(
    ("payload", "field", "value"),
    [
        (b'{"cpu": -1}', "Resources.cpu", -1.0),
        (b'{"gpu": -0.5}', "Resources.gpu", -0.5),
        (b'{"custom": {"accelerator_x": -2}}', "Resources.custom['accelerator_x']", -2.0),
        (b'{"custom": {"": 1}}', "Resources.custom", ""),
    ],
)
def test_decoding_json_surfaces_the_same_error(payload: bytes, field: str, value: object) -> None:
    with pytest.raises(msgspec.ValidationError) as caught:
        msgspec.json.decode(payload, type=Resources)
    message = str(caught.value)
    assert field in message
    assert repr(value) in message


def test_decoding_json_rejects_out_of_range_and_boolean_amounts() -> None:
    # msgspec stops these before `__post_init__`; they still never get through.
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"cpu": 1e999}', type=Resources)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"gpu": true}', type=Resources)


def test_decoding_valid_json_builds_the_struct() -> None:
    decoded = msgspec.json.decode(b'{"cpu": 2, "custom": {"accelerator_x": 1}}', type=Resources)
    assert decoded == Resources(cpu=2.0, gpu=0.0, custom={"accelerator_x": 1.0})


# --- CheckpointPolicy --------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field", "value"),
    [
        ({"frequency": -1}, "CheckpointPolicy.frequency", -1),
        ({"frequency": 1.5}, "CheckpointPolicy.frequency", 1.5),
        ({"frequency": True}, "CheckpointPolicy.frequency", True),
        ({"num_to_keep": 0}, "CheckpointPolicy.num_to_keep", 0),
        ({"num_to_keep": -3}, "CheckpointPolicy.num_to_keep", -3),
        ({"score_attribute": ""}, "CheckpointPolicy.score_attribute", ""),
        ({"at_end": 1}, "CheckpointPolicy.at_end", 1),
        ({"at_end": "yes"}, "CheckpointPolicy.at_end", "yes"),
        ({"score_order": "best"}, "CheckpointPolicy.score_order", "best"),
    ],
)
def test_checkpoint_policy_rejects(fields: dict[str, Any], field: str, value: object) -> None:
    with pytest.raises(InvalidFieldError) as caught:
        build_policy(**fields)
    assert_names(caught.value, field, value)


def test_checkpoint_policy_accepts_its_boundaries() -> None:
    policy = CheckpointPolicy(frequency=0, num_to_keep=1, at_end=True)
    assert (policy.frequency, policy.num_to_keep, policy.at_end) == (0, 1, True)
    assert CheckpointPolicy(num_to_keep=None).num_to_keep is None


@pytest.mark.parametrize(
    ("fields", "field", "value"),
    [
        ({"frequency": -1}, "CheckpointPolicy.frequency", -1),
        ({"num_to_keep": 0}, "CheckpointPolicy.num_to_keep", 0),
        ({"score_attribute": ""}, "CheckpointPolicy.score_attribute", ""),
    ],
)
def test_checkpoint_policy_decoding_rejects_what_construction_does(
    fields: dict[str, Any], field: str, value: object
) -> None:
    """A snapshot decodes a policy per trial along a shortcut for the
    usual one: it must let nothing through that construction refuses."""
    payload = msgspec.msgpack.encode(fields)
    with pytest.raises(msgspec.ValidationError, match=re.escape(f"{field}={value!r}")):
        msgspec.msgpack.decode(payload, type=CheckpointPolicy)


def test_checkpoint_policy_takes_a_mode_by_its_value() -> None:
    assert build_policy(score_order="min").score_order is Mode.MIN


def test_checkpoint_policy_decoding_surfaces_the_error() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"CheckpointPolicy\.num_to_keep=0"):
        msgspec.json.decode(b'{"num_to_keep": 0}', type=CheckpointPolicy)


# --- TrialSpec ---------------------------------------------------------------


def test_trial_spec_rejects_an_empty_trial_id() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        build_spec(trial_id="")
    assert_names(caught.value, "TrialSpec.trial_id", "")


def test_trial_spec_rejects_an_empty_trainable_name() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        build_spec(trainable_name="")
    assert_names(caught.value, "TrialSpec.trainable_name", "")


def test_trial_spec_max_failures_minus_two_is_rejected() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        build_spec(max_failures=-2)
    assert_names(caught.value, "TrialSpec.max_failures", -2)


def test_trial_spec_rejects_a_boolean_max_failures() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        build_spec(max_failures=True)
    assert_names(caught.value, "TrialSpec.max_failures", True)


@pytest.mark.parametrize("max_failures", [-1, 0, 3])
def test_trial_spec_max_failures_from_minus_one_is_accepted(max_failures: int) -> None:
    assert build_spec(max_failures=max_failures).max_failures == max_failures


def test_trial_spec_rejects_a_nested_stopping_criterion_pointing_at_the_flat_key() -> None:
    nested = {"loss": 0.1}
    with pytest.raises(InvalidFieldError) as caught:
        build_spec(stopping_criterion={"validation": nested})
    assert_names(caught.value, "TrialSpec.stopping_criterion['validation']", nested)
    assert "validation/loss" in str(caught.value)


@pytest.mark.parametrize("threshold", ["high", None, [1.0]], ids=repr)
def test_trial_spec_rejects_a_non_numeric_threshold(threshold: object) -> None:
    with pytest.raises(InvalidFieldError) as caught:
        build_spec(stopping_criterion={"accuracy": threshold})
    assert_names(caught.value, "TrialSpec.stopping_criterion['accuracy']", threshold)


def test_trial_spec_keeps_a_boolean_threshold_through_encoding() -> None:
    spec = build_spec(stopping_criterion={"done": True, "training_iteration": 3})
    decoded = msgspec.msgpack.decode(msgspec.msgpack.encode(spec), type=TrialSpec)
    assert decoded.stopping_criterion == {"done": True, "training_iteration": 3.0}
    assert decoded.stopping_criterion["done"] is True


def test_trial_spec_accepts_flat_numeric_criteria() -> None:
    spec = build_spec(stopping_criterion={"validation/loss": 0.1, "training_iteration": 10})
    assert spec.stopping_criterion == {"validation/loss": 0.1, "training_iteration": 10}


@pytest.mark.parametrize(
    ("fields", "field", "value"),
    [
        ({"trial_id": ""}, "TrialSpec.trial_id", ""),
        ({"trainable_name": ""}, "TrialSpec.trainable_name", ""),
        ({"max_failures": -2}, "TrialSpec.max_failures", -2),
    ],
)
def test_trial_spec_decoding_rejects_what_construction_does(
    fields: dict[str, Any], field: str, value: object
) -> None:
    """A snapshot decodes a spec per trial along a shortcut for the usual
    one: it must let nothing through that construction refuses."""
    payload = msgspec.msgpack.encode({"trial_id": "t1", "trainable_name": "f", **fields})
    with pytest.raises(msgspec.ValidationError, match=re.escape(f"{field}={value!r}")):
        msgspec.msgpack.decode(payload, type=TrialSpec)


def test_trial_spec_makes_a_list_of_no_formats_a_tuple() -> None:
    """(The shortcut for the usual spec takes only the empty tuple.)"""
    formats: Any = []
    spec = build_spec(export_formats=formats)
    assert spec.export_formats == ()
    assert msgspec.msgpack.encode(spec) == msgspec.msgpack.encode(build_spec())


def test_trial_spec_decoding_surfaces_the_error() -> None:
    payload = b'{"trial_id": "t1", "trainable_name": "f", "max_failures": -2}'
    with pytest.raises(msgspec.ValidationError, match=r"TrialSpec\.max_failures=-2"):
        msgspec.json.decode(payload, type=TrialSpec)


# --- Location ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "local_hostname", "expected"),
    [
        (Location(), None, ""),
        (Location(hostname="node-1"), "driver", ""),
        (Location(pid=42), None, "pid=42"),
        (Location(pid=42), "driver", "pid=42"),
        (Location(hostname="driver", pid=42), "driver", "pid=42"),
        (Location(hostname="node-1", pid=42), "driver", "node-1:42"),
        (Location(hostname="node-1", pid=42), None, "node-1:42"),
    ],
)
def test_location_describe(location: Location, local_hostname: str | None, expected: str) -> None:
    assert location.describe(local_hostname) == expected


# --- export formats ----------------------------------------------------------


def test_parse_export_formats_normalises_case_and_spaces() -> None:
    parsed = parse_export_formats([" H5 ", "Checkpoint", "model"])
    assert parsed == (ExportFormat.H5, ExportFormat.CHECKPOINT, ExportFormat.MODEL)


def test_parse_export_formats_of_nothing_is_empty() -> None:
    assert parse_export_formats([]) == ()


def test_parse_export_formats_names_an_unknown_format_and_the_accepted_ones() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        parse_export_formats(["h5", "tflite"])
    message = str(caught.value)
    assert caught.value.value == "tflite"
    assert "'tflite'" in message
    for accepted in ("checkpoint", "model", "h5"):
        assert accepted in caught.value.expected
