"""Encoding and decoding model values: msgpack for storage, JSON for people.

These are the only serializers tunecore persists with. Decoding validates
against the declared type, so a crafted payload can build nothing but the
model's structs and plain JSON-shaped values: msgpack extension types (the
one way to smuggle opaque objects into an untyped field) are refused, and
there is no pickle anywhere on the path. Nothing read raises anything but
`msgspec.DecodeError` (or a subclass): data nested deeper than Python's
recursion limit lets msgspec follow is a `TooDeepError`, not a
RecursionError, so a reader catching one type catches every damaged input.
"""

from __future__ import annotations

import functools
from typing import TypeVar, overload

import msgspec

from tunecore.model.packed import encoded

T = TypeVar("T")


class UnsupportedExtensionError(msgspec.DecodeError):
    """A msgpack payload carried an extension type; tunecore never writes one."""


class TooDeepError(msgspec.DecodeError):
    """The data is nested too deeply to decode; tunecore never writes such."""


def _too_deep() -> TooDeepError:
    return TooDeepError("the data is nested too deeply to decode (beyond Python's recursion limit)")


def _refuse_extension(code: int, data: memoryview) -> object:
    raise UnsupportedExtensionError(
        f"msgpack extension type {code} ({len(data)} bytes) is not allowed in tunecore data"
    )


_ENCODER = msgspec.msgpack.Encoder(enc_hook=encoded)
_JSON_ENCODER = msgspec.json.Encoder(enc_hook=encoded)
"""Both encode a finished trial's packed result as the map it packed
(`model.packed`)."""


@functools.cache
def _decoder(kind: object) -> msgspec.msgpack.Decoder[object]:
    return msgspec.msgpack.Decoder(kind, ext_hook=_refuse_extension)


@functools.cache
def _json_decoder(kind: object) -> msgspec.json.Decoder[object]:
    return msgspec.json.Decoder(kind)


def to_msgpack(value: object) -> bytes:
    return _ENCODER.encode(value)


@overload
def from_msgpack(data: bytes | memoryview, kind: type[T]) -> T: ...
@overload
def from_msgpack(data: bytes | memoryview, kind: object) -> object: ...
def from_msgpack(data: bytes | memoryview, kind: object) -> object:
    """Decode and validate against `kind` (a struct, or a union such as
    `TrialEvent`); raises `msgspec.ValidationError` naming the path of the
    bad field, or `msgspec.DecodeError` (see the module docstring)."""
    try:
        return _decoder(kind).decode(data)
    except RecursionError:
        raise _too_deep() from None


def to_json(value: object) -> bytes:
    return _JSON_ENCODER.encode(value)


@overload
def from_json(data: bytes | str, kind: type[T]) -> T: ...
@overload
def from_json(data: bytes | str, kind: object) -> object: ...
def from_json(data: bytes | str, kind: object) -> object:
    try:
        return _json_decoder(kind).decode(data)
    except RecursionError:
        raise _too_deep() from None
