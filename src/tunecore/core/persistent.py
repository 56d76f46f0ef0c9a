"""Persistent containers for per-trial scheduler state.

Scheduler state is copied on every change (it is immutable), so a plain dict
of 100 000 trials would cost a 100 000-entry copy per result. These keep the
copy small and stay plain msgspec data, so they encode and decode as they
are:

- `ShardedMap`: 256 dicts chosen by the CRC-32 of the key (stable across
  processes, unlike `hash`); an update copies one shard and the shard tuple.
- `SortedChunks`: a sorted sequence in chunks of at most `_CHUNK` items; an
  insert or removal copies one chunk and two small indexes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from itertools import accumulate
from operator import itemgetter
from typing import Generic, TypeVar
from zlib import crc32

import msgspec

K = TypeVar("K", str, int)
V = TypeVar("V")
X = TypeVar("X")
T = TypeVar("T", float, tuple[float, int], tuple[float, int, str])

_SHARD_MASK = 255
_NO_DICT: dict[object, object] = {}


def _shard_of(key: str | int) -> int:
    """The shard a key lives in: stable across processes and Python versions
    (CRC-32 for strings, the low bits for integers), because the shard layout
    is part of the encoded state."""
    if isinstance(key, str):
        return crc32(key.encode()) & _SHARD_MASK
    return key & _SHARD_MASK


class ShardedMap(msgspec.Struct, Generic[K, V], frozen=True, array_like=True):
    """A persistent map that msgspec can encode: 256 dicts, copy-on-write.

    An update copies the one shard the key lives in (about n/256 entries)
    and the tuple of shards; a lookup is a CRC and a dict lookup. The dicts
    are never mutated after they are published, so every older map stays
    valid. Iteration order is shard order, then insertion order within a
    shard: deterministic, but not the order keys were added.
    """

    shards: tuple[dict[K, V], ...] = ()
    size: int = 0

    def __len__(self) -> int:
        return self.size

    def __contains__(self, key: K) -> bool:
        return self.get(key) is not None

    def get(self, key: K) -> V | None:
        shards = self.shards
        if not shards:
            return None
        return shards[_shard_of(key)].get(key)

    def set(self, key: K, value: V) -> ShardedMap[K, V]:
        shards = self.shards or _empty_shards()
        index = _shard_of(key)
        shard = dict(shards[index])
        grown = key not in shard
        shard[key] = value
        return ShardedMap(shards=_replaced(shards, index, shard), size=self.size + grown)

    def discard(self, key: K) -> ShardedMap[K, V]:
        """The map without `key` (itself when the key is absent)."""
        shards = self.shards
        if not shards:
            return self
        index = _shard_of(key)
        if key not in shards[index]:
            return self
        shard = dict(shards[index])
        del shard[key]
        return ShardedMap(shards=_replaced(shards, index, shard), size=self.size - 1)

    def items(self) -> Iterator[tuple[K, V]]:
        for shard in self.shards:
            yield from shard.items()


def _replaced(items: tuple[X, ...], index: int, item: X) -> tuple[X, ...]:
    return (*items[:index], item, *items[index + 1 :])


def _spliced(items: tuple[X, ...], index: int, replacement: tuple[X, ...]) -> tuple[X, ...]:
    return (*items[:index], *replacement, *items[index + 1 :])


def _inserted(items: tuple[X, ...], index: int, item: X) -> tuple[X, ...]:
    return (*items[:index], item, *items[index:])


def _empty_shards() -> tuple[dict[K, V], ...]:
    empty: dict[K, V] = _NO_DICT  # type: ignore[assignment]
    return (empty,) * (_SHARD_MASK + 1)


_CHUNK = 512
_PLUS_ONE = (1).__add__
_MINUS_ONE = (-1).__add__


class SortedChunks(msgspec.Struct, Generic[T], frozen=True, array_like=True):
    """A persistent sorted multiset: ascending keys in tuples of at most
    `2 * 512` (split in halves when they grow past it), with the last key and
    the running length of each chunk kept alongside so that a query is two
    binary searches. An insert or removal copies one chunk and the two
    per-chunk indexes (n/512 entries): bounded, never the whole multiset."""

    chunks: tuple[tuple[T, ...], ...] = ()
    maxes: tuple[T, ...] = ()
    ends: tuple[int, ...] = ()

    def __len__(self) -> int:
        ends = self.ends
        return ends[-1] if ends else 0

    def insert(self, key: T) -> SortedChunks[T]:
        chunks = self.chunks
        if not chunks:
            return SortedChunks(chunks=((key,),), maxes=(key,), ends=(1,))
        index = min(bisect_left(self.maxes, key), len(chunks) - 1)
        chunk = chunks[index]
        grown = _inserted(chunk, bisect_right(chunk, key), key)
        if len(grown) > 2 * _CHUNK:
            return _rebuilt(_spliced(chunks, index, (grown[:_CHUNK], grown[_CHUNK:])))
        maxes = self.maxes
        if grown[-1] != chunk[-1]:
            maxes = _replaced(maxes, index, grown[-1])
        ends = self.ends
        return SortedChunks(
            chunks=_replaced(chunks, index, grown),
            maxes=maxes,
            ends=ends[:index] + tuple(map(_PLUS_ONE, ends[index:])),
        )

    def remove(self, key: T) -> SortedChunks[T]:
        """The multiset with one `key` fewer; `KeyError` if there is none."""
        chunks = self.chunks
        index = bisect_left(self.maxes, key)
        if index == len(chunks):
            raise KeyError(key)
        chunk = chunks[index]
        at = bisect_left(chunk, key)
        if chunk[at] != key:
            raise KeyError(key)
        shrunk = chunk[:at] + chunk[at + 1 :]
        if not shrunk:
            return _rebuilt(_spliced(chunks, index, ()))
        maxes = self.maxes
        if at == len(shrunk):
            maxes = _replaced(maxes, index, shrunk[-1])
        ends = self.ends
        return SortedChunks(
            chunks=_replaced(chunks, index, shrunk),
            maxes=maxes,
            ends=ends[:index] + tuple(map(_MINUS_ONE, ends[index:])),
        )

    def at(self, position: int) -> T:
        """The key at `position` in ascending order (0 is the smallest)."""
        ends = self.ends
        index = bisect_right(ends, position)
        start = ends[index - 1] if index else 0
        return self.chunks[index][position - start]

    def count_above(self, key: T) -> int:
        """How many keys are strictly greater than `key`."""
        chunks = self.chunks
        index = bisect_right(self.maxes, key)
        if index == len(chunks):
            return 0
        at_most = (self.ends[index - 1] if index else 0) + bisect_right(chunks[index], key)
        return len(self) - at_most

    def descending(self) -> Iterator[T]:
        for chunk in reversed(self.chunks):
            yield from reversed(chunk)


def _rebuilt(chunks: tuple[tuple[T, ...], ...]) -> SortedChunks[T]:
    maxes: tuple[T, ...] = tuple(map(itemgetter(-1), chunks))
    return SortedChunks(chunks=chunks, maxes=maxes, ends=tuple(accumulate(map(len, chunks))))


# -- the rules ------------------------------------------------------------------
