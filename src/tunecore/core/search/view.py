"""What a `sample_from` function sees: a read-only view of the config so far.

A `sample_from` value depends on other values of the same config, which the
variant resolver fills in one by one. The function is called with a view of
the config as it stands; reading a value that is not resolved yet raises
`UnresolvedValueError`, the resolver catches it and calls the function again
once more values are in (Ray's `_UnresolvedAccessGuard` and its retry loop).

Rules of the view (they are what makes the retry sound):
- Keys are always known, values only once resolved. Iterating the keys,
  `len` and `in` never wait; reading a value (by `[]`, attribute, `get`,
  `values()`, `items()`, equality) of a still unresolved `sample_from`
  waits, and so does reading the function's own position (that is a
  dependency on itself, reported as a cycle).
- The view wraps the live config without copying it (building a view is
  O(1)), so a function must not keep the view after it returns.
- Nothing can be written through it: nested dicts come back as
  `ConfigView`s, lists as `ListView`s, scalars as themselves.
- Every wait is also recorded on a shared `Probe`, so a function that
  swallows the exception (`except Exception:`) is still treated as
  unresolved instead of silently using a fallback.
- Attribute access works like Ray's `spec`: `view.lr` is `view["lr"]`, and
  on the root `view.config` / `view["config"]` are the view itself (Ray's
  `spec.config.lr`), unless the config has its own key `"config"`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, TypeAlias, overload

from tunecore.model import JsonDict, JsonValue

Path: TypeAlias = tuple[str | int, ...]
"""Where a value sits in a config: dict keys and list indices from the root."""

ConfigValue: TypeAlias = Any
"""A value read through a view: at run time a scalar as it is, or a
`ConfigView` / `ListView` for a container. Typed `Any`, as Ray leaves it, so
that functions written the way Ray's documentation writes them
(`lambda spec: 10 ** -spec.config.x`) type-check in the user's code."""


class UnresolvedValueError(Exception):
    """A `sample_from` function read a value that is not resolved yet."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"the value at {path!r} is not resolved yet")


class Probe:
    """Remembers the first unresolved value a function tried to read."""

    __slots__ = ("waited_for",)

    def __init__(self) -> None:
        self.waited_for: Path | None = None

    def wait(self, path: Path) -> UnresolvedValueError:
        if self.waited_for is None:
            self.waited_for = path
        return UnresolvedValueError(path)


def _wrap(value: JsonValue, path: Path, pending: Collection[Path], probe: Probe) -> ConfigValue:
    if path in pending:
        raise probe.wait(path)
    if isinstance(value, dict):
        return ConfigView(value, path, pending, probe)
    if isinstance(value, list):
        return ListView(value, path, pending, probe)
    return value


class ConfigView(Mapping[str, ConfigValue]):
    """A read-only view of a (nested) config dict; see the module rules."""

    __slots__ = ("_data", "_path", "_pending", "_probe")

    def __init__(self, data: JsonDict, path: Path, pending: Collection[Path], probe: Probe) -> None:
        self._data = data
        self._path = path
        self._pending = pending
        self._probe = probe

    def __getitem__(self, key: str) -> ConfigValue:
        if key == "config" and not self._path and key not in self._data:
            return self
        value = self._data[key]
        return _wrap(value, (*self._path, key), self._pending, self._probe)

    def __getattr__(self, name: str) -> ConfigValue:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(
                f"the config has no key {name!r} (keys: {sorted(self._data)})"
            ) from None

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"ConfigView(keys={list(self._data)!r})"


class ListView(Sequence[ConfigValue]):
    """A read-only view of a list inside a config; elements wait like values."""

    __slots__ = ("_data", "_path", "_pending", "_probe")

    def __init__(
        self, data: list[JsonValue], path: Path, pending: Collection[Path], probe: Probe
    ) -> None:
        self._data = data
        self._path = path
        self._pending = pending
        self._probe = probe

    @overload
    def __getitem__(self, index: int) -> ConfigValue: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ConfigValue]: ...
    def __getitem__(self, index: int | slice) -> ConfigValue | Sequence[ConfigValue]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self._data))[index]]
        position = index + len(self._data) if index < 0 else index
        if not 0 <= position < len(self._data):
            raise IndexError(f"list index {index} out of range ({len(self._data)} items)")
        return _wrap(self._data[position], (*self._path, position), self._pending, self._probe)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"ListView(len={len(self._data)})"


def view_of(config: JsonDict, pending: Collection[Path], probe: Probe) -> ConfigView:
    """The root view of `config` in which the values at `pending` wait."""
    return ConfigView(config, (), pending, probe)
