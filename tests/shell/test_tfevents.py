"""The TFRecord checksum: CRC-32C, in C when google-crc32c is installed
(the dev and bench environments have it) and in Python otherwise; both
must give the same bytes, which tensorboardX's reader checks
(`test_callbacks.read_scalars`). And the `Event` tunecore encodes itself:
the bytes protobuf writes for the same event."""

from __future__ import annotations

import importlib
import struct

import google_crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tunecore.shell import tfevents


def test_the_python_checksum_matches_the_standard_check_value() -> None:
    # RFC 3720's CRC-32C check value for the ASCII digits 1 to 9.
    assert tfevents.python_crc32c(b"123456789") == 0xE3069283
    assert tfevents.python_crc32c(b"") == 0


@given(st.binary(max_size=600))
def test_the_c_and_python_checksums_agree(data: bytes) -> None:
    assert google_crc32c.value(data) == tfevents.python_crc32c(data)


def test_records_are_checksummed_in_c_when_google_crc32c_is_compiled() -> None:
    assert google_crc32c.implementation == "c"
    assert tfevents.crc32c is google_crc32c.value


tags = st.text(st.characters(exclude_categories=["Cs"]), max_size=200)  # encodable
scalars = st.lists(st.tuples(tags, st.floats(allow_nan=False, width=64)), max_size=12)


@given(
    st.floats(min_value=0, max_value=4e9),
    st.none() | st.integers(min_value=-(2**63), max_value=2**63 - 1),
    scalars,
)
def test_a_scalar_event_reads_back_as_the_event_protobuf_makes(
    wall_time: float, step: int | None, values: list[tuple[str, float]]
) -> None:
    event_pb2 = pytest.importorskip("tensorboardX.proto.event_pb2")
    summary_pb2 = importlib.import_module("tensorboardX.proto.summary_pb2")
    expected = event_pb2.Event(wall_time=wall_time)
    if step is not None:
        expected.step = step
    summary = summary_pb2.Summary()
    for tag, value in values:
        # protobuf's float field takes the value as a float32 cast does.
        as_float32 = struct.unpack("<f", tfevents._float32(value))[0]
        summary.value.add(tag=tag, simple_value=as_float32)
    expected.summary.CopyFrom(summary)
    # Read back, not compared byte for byte: protobuf leaves out fields at
    # their default (a step of 0), which tunecore writes.
    assert event_pb2.Event.FromString(tfevents.scalar_event(wall_time, step, values)) == expected


@given(
    st.floats(min_value=0, max_value=4e9),
    st.none() | st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.lists(st.tuples(tags, st.floats(allow_nan=False, allow_infinity=False)), max_size=12),
)
def test_scalars_event_packs_the_bytes_scalar_event_makes(
    wall_time: float, step: int | None, values: list[tuple[str, float]]
) -> None:
    # Floats up to 1e308: a value beyond float32's range saturates either way.
    tag_tuple = tuple(tag for tag, _ in values)
    numbers = [number for _, number in values]
    for _ in range(2):  # the second time from the layout laid out the first
        packed = tfevents.scalars_event(wall_time, step, tag_tuple, numbers)
        assert packed == tfevents.scalar_event(wall_time, step, values)
