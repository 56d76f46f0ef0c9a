"""A finished trial's last result (and metric stats) as the driver keeps it:
its values packed, its keys shared with every map of the same keys.

A finished trial keeps its last result as long as the experiment, and
every trial of an experiment reports the same keys (the metrics and the
annotations Ray Tune fills in: `time_this_iter_s`, `timestamp`, `date`,
`pid`, `hostname`, `node_ip`, `trial_id`, ...). Encoded as the msgpack map
a snapshot stores, half of a one-report trial's result was those key names
(issue 41). `PackedMap` keeps the values alone, as a msgpack array, behind
the index of the map's key tuple (its *shape*) in a table this process
shares between all packed maps: one allocation per map, no key repeated.

Nothing here is persisted: encoding a `PackedMap` (`encoded`, the hook of
`model.codec`'s encoders) gives the map it packed, so a snapshot has the
bytes it had when the result was kept as that map's msgpack
(`tests/model/test_packed.py` checks it, byte for byte). msgspec refuses to
encode a `PackedMap` without the hook, so no encoder can write its private
form by mistake; a pickle carries the keys (`__reduce__`), so a packed map
sent to another process is rebuilt against that process's table.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from tunecore.model.storable import MAX_INT, MIN_INT

SHAPE_BYTES = 2
"""The packed map's first bytes: its shape's index in `_SHAPES`."""

MAX_SHAPES = 1 << (8 * SHAPE_BYTES)
"""Shapes this process keeps at most. An experiment's results have a few
(the metrics a trainable reports, with and without its end's flag);
beyond this (a trainable reporting new keys in every trial), `pack` says
so and the caller keeps the map as its msgpack."""

_SHAPES: dict[int, tuple[str, ...]] = {}
_SHAPE_INDEX: dict[tuple[str, ...], int] = {}
_NEXT_INDEX = itertools.count()
"""Without a lock (the pure layers take none): each index is drawn once
(`next` on a count is atomic), so two threads registering one shape at
once give it two indices, each naming it, and never one index two shapes."""

_ENCODE = msgspec.msgpack.Encoder()
_DECODE = msgspec.msgpack.Decoder()
"""Untyped: the values' array as a list (half the time of a typed one)."""


class PackedMap(bytes):
    """A map of string keys packed: `SHAPE_BYTES` of its shape's index,
    then the msgpack array of its values in the keys' order. Not a map to
    msgspec (see the module docstring); compared and hashed as its bytes,
    which within a process are the same for equal maps of the same key
    order (values as msgpack encodes them: 1 and 1.0 differ)."""

    __slots__ = ()

    def keys(self) -> tuple[str, ...]:
        return _SHAPES[self[0] << 8 | self[1]]  # SHAPE_BYTES, big-endian, without a slice

    def values_packed(self) -> memoryview:
        """The msgpack array of the values (no copy)."""
        return memoryview(self)[SHAPE_BYTES:]

    def unpacked(self) -> dict[str, object]:
        """The map, its values decoded untyped (a new dict each time)."""
        values: list[object] = _DECODE.decode(memoryview(self)[SHAPE_BYTES:])
        return dict(zip(self.keys(), values, strict=True))

    def __repr__(self) -> str:
        return f"PackedMap({self.unpacked()!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_repacked, (self.keys(), bytes(self.values_packed())))


def pack(mapping: Mapping[str, object]) -> PackedMap | None:
    """`mapping` packed, or None when this process holds `MAX_SHAPES`
    shapes and its keys are not one of them."""
    keys = tuple(mapping)
    index = _SHAPE_INDEX.get(keys)
    if index is None:
        index = _registered(keys)
        if index is None:
            return None
    return PackedMap(index.to_bytes(SHAPE_BYTES, "big") + _ENCODE.encode(tuple(mapping.values())))


def pack_exact(mapping: Mapping[str, object]) -> PackedMap | None:
    """`mapping` packed when it unpacks as itself, values of the same types
    (`round_trips`); else None, as when the table is full. For a map the
    caller was given (a config), where `pack` is for one msgpack decoded
    (a result)."""
    return pack(mapping) if round_trips(mapping) else None


def round_trips(value: object) -> bool:
    """Whether `value` decodes from its msgpack as itself, of the same
    types: built of JSON's types exactly (dicts of string keys, lists,
    UTF-8 strings, integers msgpack holds, floats, booleans, None). A
    tuple would come back a list, a subclass (an enum, a numpy float) its
    base or its value; an unencodable object, a lone surrogate or an int
    beyond 64 bits would not encode."""
    kind = type(value)
    if kind is dict:
        return all(
            type(key) is str and _utf8(key) and round_trips(item)
            for key, item in value.items()  # type: ignore[attr-defined]
        )
    if kind is list:
        return all(map(round_trips, value))  # type: ignore[call-overload]
    if kind is str:
        return _utf8(value)  # type: ignore[arg-type]
    if kind is int:
        return MIN_INT <= value <= MAX_INT  # type: ignore[operator]
    return kind is float or kind is bool or value is None


def _utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _registered(keys: tuple[str, ...]) -> int | None:
    if len(_SHAPES) >= MAX_SHAPES:
        return None
    index = next(_NEXT_INDEX)
    if index >= MAX_SHAPES:
        return None
    _SHAPES[index] = keys
    _SHAPE_INDEX[keys] = index
    return index


def _repacked(keys: tuple[str, ...], values: bytes) -> PackedMap | dict[str, object]:
    """A pickled packed map in this process (its shape registered here), or
    the map itself when this process's table is full."""
    index = _SHAPE_INDEX.get(keys)
    if index is None:
        index = _registered(keys)
        if index is None:
            return dict(zip(keys, _DECODE.decode(values), strict=True))
    return PackedMap(index.to_bytes(SHAPE_BYTES, "big") + values)


def encoded(value: object) -> object:
    """The encoders' hook (`enc_hook`): a `PackedMap` as the map it packed
    (its values as msgpack decodes them, which encode to the same bytes);
    any other type msgspec does not know is refused with the TypeError
    msgspec raises without the hook."""
    if isinstance(value, PackedMap):
        return value.unpacked()
    raise TypeError(f"Encoding objects of type {type(value).__name__} is unsupported")


class ReadUnpacked:
    """A struct's field read through its slot: a `PackedMap` held there
    reads as the map it packed (a new dict each time), anything else as it
    is. Installed over a field (`unpacked_on_read`), it lets a struct keep
    a value it holds long packed while every caller reads the field by its
    name as before; the constructor, `msgspec.structs` and the encoders
    use the slot itself (the `PackedMap`, which `encoded` writes as its
    map)."""

    __slots__ = ("_slot",)

    def __init__(self, slot: Any) -> None:
        self._slot = slot

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = self._slot.__get__(instance, owner)
        if type(value) is PackedMap:
            return value.unpacked()
        return value

    def __set__(self, instance: object, value: object) -> None:
        self._slot.__set__(instance, value)


def unpacked_on_read(cls: type, *names: str) -> tuple[Callable[[object], object], ...]:
    """Install `ReadUnpacked` over the fields `names` of the struct `cls`.
    Returns, in that order, what reads each slot itself (the `PackedMap`
    once packed; a C call, cheap enough for every event's state)."""
    slots = [cls.__dict__[name] for name in names]
    for name, slot in zip(names, slots, strict=True):
        setattr(cls, name, ReadUnpacked(slot))
    return tuple(slot.__get__ for slot in slots)
