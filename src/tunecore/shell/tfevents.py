"""TensorBoard event files, written directly: a few bytes per result.

TensorBoard reads `events.out.tfevents.*` files: a sequence of TFRecords
(little-endian u64 length, masked CRC-32C of those 8 bytes, the payload, its
masked CRC-32C), each payload an `Event` protocol buffer. The first event
carries the file version; each later one a wall time, a step and a `Summary`
of `(tag, simple_value)` scalars. That is all tunecore writes, so it encodes
the handful of protobuf fields itself instead of going through tensorboardX:
a `SummaryWriter` per trial started a writer thread, fsynced on every flush
and joined the thread on close, which was a quarter of the driver's time
for a trial that reports once (docs/speed.md). Here a result costs one
encode and one buffered `write` to a file kept open.

The checksums are most of that encode in pure Python (about 23 us for a
result of a dozen scalars, on the thread that writes every trial's
files): with `google-crc32c` installed (the `tensorboard` extra) they are
computed in C, as tensorboardX does with its own optional `crc32c`.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import socket
import struct
import time
from collections.abc import Callable, Iterable, Mapping

from tunecore.core.results import TRAINING_ITERATION, flatten
from tunecore.model import JsonValue
from tunecore.model.numbers import is_int, is_number

FILE_PREFIX = "events.out.tfevents."
TAG_PREFIX = "ray/tune/"
"""Scalar tags start with this, as in Ray Tune, so existing TensorBoard
views and comparisons with Ray runs keep working."""
FILE_VERSION = b"brain.Event:2"

_FLOAT32_MAX = 3.4028234663852886e38
_ONE_BYTE = tuple(bytes((value,)) for value in range(0x80))  # the varints below 128
_pack_float32 = struct.Struct("<f").pack
_pack_double = struct.Struct("<d").pack


def _crc32c_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC_TABLE = _crc32c_table()


def python_crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the checksum TFRecord uses, a byte at a time."""
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _native_crc32c() -> Callable[[bytes], int] | None:
    """google-crc32c's C implementation, if installed (its pure-Python
    fallback is no faster than ours, so it counts only when compiled)."""
    try:
        import google_crc32c  # noqa: PLC0415 - optional
    except ImportError:
        return None
    if google_crc32c.implementation != "c":
        return None
    value: Callable[[bytes], int] = google_crc32c.value
    return value


crc32c: Callable[[bytes], int] = _native_crc32c() or python_crc32c
"""CRC-32C of `data`: in C when google-crc32c is installed, else in Python."""


def masked_crc32c(data: bytes) -> int:
    """The rotated and offset CRC that TFRecord stores (so a record holding
    its own CRC does not check trivially)."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(payload: bytes) -> bytes:
    """One TFRecord around `payload`."""
    length = struct.pack("<Q", len(payload))
    return (
        length
        + struct.pack("<I", masked_crc32c(length))
        + payload
        + struct.pack("<I", masked_crc32c(payload))
    )


def _varint(value: int) -> bytes:
    if 0 <= value < 0x80:
        return _ONE_BYTE[value]
    value &= 0xFFFFFFFFFFFFFFFF  # int64 two's complement, as protobuf encodes negatives
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _length_delimited(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _float32(value: float) -> bytes:
    """`value` as a float32, saturating to infinity as a float32 cast does
    (struct refuses values beyond the float32 range)."""
    if -_FLOAT32_MAX <= value <= _FLOAT32_MAX:  # the common case; NaN is not
        return _pack_float32(value)
    if math.isfinite(value):
        value = math.copysign(math.inf, value)
    return _pack_float32(value)


@functools.lru_cache(maxsize=4096)
def _scalar_head(tag: str) -> bytes:
    """A `Summary.Value{tag=1, simple_value=2}` field up to the value's four
    bytes: its key and length, the tag, the simple_value key. Only the tag
    decides them, and a trial's tags repeat at every result: encoding them
    once per tag took the encode of a result of a dozen scalars from 10.5
    us to 2.5 us."""
    tag_field = _length_delimited(1, tag.encode())
    return _varint(1 << 3 | 2) + _varint(len(tag_field) + 5) + tag_field + b"\x15"


def scalar_event(wall_time: float, step: int | None, scalars: Iterable[tuple[str, float]]) -> bytes:
    """An `Event{wall_time=1, step=2, summary=5{value=1{tag=1, simple_value=2}}}`."""
    summary = b"".join(_scalar_head(tag) + _float32(value) for tag, value in scalars)
    return _summary_event(wall_time, step, summary)


def scalars_event(
    wall_time: float, step: int | None, tags: tuple[str, ...], values: list[float]
) -> bytes:
    """`scalar_event` of `zip(tags, values)`, for a writer whose tags repeat
    (a trial reports the same metrics every time): the summary is packed by
    one `struct` call laid out once per tuple of tags, instead of a few
    calls per scalar (1.4 against 2.7 us for eight scalars)."""
    layout = _summary_layout(tags)
    fields: list[bytes | float] = [b""] * (2 * len(tags))
    fields[0::2] = layout.heads
    fields[1::2] = values
    try:
        summary = layout.pack(*fields)
    except OverflowError:  # a finite value beyond float32's range: saturate it
        return scalar_event(wall_time, step, zip(tags, values, strict=True))
    return _summary_event(wall_time, step, summary)


class _SummaryLayout:
    """The fields of a `Summary` of given tags: each tag's head, then room
    for its float32 (`_scalar_head`)."""

    def __init__(self, tags: tuple[str, ...]) -> None:
        self.heads = [_scalar_head(tag) for tag in tags]
        self.pack = struct.Struct("<" + "".join(f"{len(head)}sf" for head in self.heads)).pack


_summary_layout = functools.lru_cache(maxsize=1024)(_SummaryLayout)


def _summary_event(wall_time: float, step: int | None, summary: bytes) -> bytes:
    step_field = b"" if step is None else b"\x10" + _varint(step)
    return b"\x09" + _pack_double(wall_time) + step_field + _length_delimited(5, summary)


def result_records(result: Mapping[str, JsonValue], now: float, first: bool) -> bytes:
    """The TFRecords of one result: its finite numbers as scalars tagged
    `TAG_PREFIX` + flattened key, stepped by `training_iteration`; a new
    file's version record first."""
    raw_step = result.get(TRAINING_ITERATION)
    step = raw_step if is_int(raw_step) else None
    tags, values = _finite_numbers(flatten(result))
    data = record(scalars_event(now, step, tags, values)) if tags else b""
    return record(version_event(now)) + data if first else data


def _finite_numbers(flat: Mapping[str, JsonValue]) -> tuple[tuple[str, ...], list[float]]:
    """The tags and values of the finite numbers of a flattened result but
    its step, in its order (strings and flags are skipped first: they are
    most of the rest, and this runs for every result)."""
    tags: list[str] = []
    values: list[float] = []
    for key, value in flat.items():
        kind = type(value)
        if kind is str or kind is bool or not (kind is float or is_number(value)):
            continue
        try:
            number = float(value)  # type: ignore[arg-type]
        except OverflowError:  # an int beyond a float's range: not finite
            continue
        if math.isfinite(number) and key != TRAINING_ITERATION:
            tags.append(TAG_PREFIX + key)
            values.append(number)
    return tuple(tags), values


def version_event(wall_time: float) -> bytes:
    """The first event of every file: `Event{wall_time=1, file_version=3}`."""
    return b"\x09" + struct.pack("<d", wall_time) + _length_delimited(3, FILE_VERSION)


_file_numbers = itertools.count(1)


def new_file_name() -> str:
    """A name no other writer in this process or on another host picks:
    time, host, process and a counter, as TensorBoard's writers name them."""
    number = next(_file_numbers)
    return f"{FILE_PREFIX}{int(time.time()):010d}.{_host()}.{os.getpid()}.{number}"


@functools.cache
def _host() -> str:
    return socket.gethostname()  # tens of microseconds a call: once per process
