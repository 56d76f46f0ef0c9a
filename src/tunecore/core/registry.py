"""A policy family's one table: each policy's canonical name, its class and
Ray Tune's names for it.

Every list of policies derives from a family's `Registry`: the types a
snapshot decodes (`union`), Ray's `create_scheduler`/`create_searcher`
(`ray_names`), the command line's choices (`choices`). So a new policy is
its module plus one `Entry` in its family's table, and nothing else names
it. A registry is immutable: `including` gives a larger one, which is how a
user's own policy joins (pass the result where a registry is taken, such as
`snapshot_kind`).

A class whose package is optional is named by its import path
(`"module:Class"`), imported only when chosen; such an entry has no place
in a union, which only holds what a snapshot stores.
"""

from __future__ import annotations

import functools
import importlib
import operator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@runtime_checkable
class StoredBefore(Protocol):
    """A policy as an older tunecore stored it (`Entry.stored_before`)."""

    def upgraded(self) -> object:
        """The policy it is today."""
        ...


@dataclass(frozen=True)
class Entry:
    """One policy. `name` is the canonical spelling (the command line's);
    `policy` the class, or its import path; `ray_names` what Ray Tune's
    `create_*` accepts for it (none: Ray has no such name); `stored_as` the
    type a snapshot decodes it as when that is not the class itself (a
    generic one's parameters); `default` marks the policy the experiment
    uses when none is given (the command line then passes none);
    `settable` the configuration fields the command line's flags may set
    (by field name: a struct's signature also lists its state, so it cannot
    tell them); `what_if` whether `tunecore simulate` can replay recorded
    curves under it (it stops and pauses, but never changes a config);
    `in_cli` whether `tunecore run` offers it (one that needs a partner,
    such as HyperBandForBOHB its searcher, is not); `stored_before` a
    struct that reads, under the same tag, what an older tunecore stored
    of it, with `upgraded()` giving today's policy (see `as_before`);
    `wraps` marks a generic policy that holds another of the family (such
    as ResourceChangingScheduler its base scheduler): it is stored as
    `policy[the union of the others]`."""

    name: str
    policy: type | str
    ray_names: tuple[str, ...] = ()
    stored_as: object = None
    default: bool = False
    settable: tuple[str, ...] = ()
    what_if: bool = False
    in_cli: bool = True
    stored_before: type | None = None
    wraps: bool = False

    def resolve(self) -> type:
        """The class, imported now if it is named by its path."""
        if isinstance(self.policy, type):
            return self.policy
        module, _, attribute = self.policy.partition(":")
        resolved: type = getattr(importlib.import_module(module), attribute)
        return resolved


@dataclass(frozen=True)
class Registry:
    """A family's entries (see the module docstring); `family` names it in
    errors. Names are unique across canonical names and Ray's."""

    family: str
    entries: tuple[Entry, ...]

    def __post_init__(self) -> None:
        canonical = [entry.name for entry in self.entries]
        duplicated = sorted({name for name in canonical if canonical.count(name) > 1})
        if duplicated:
            raise ValueError(f"{self.family} registry: the names {duplicated} appear twice")

    def including(self, *entries: Entry) -> Registry:
        """This registry with `entries` added (a user's own policies)."""
        return Registry(self.family, (*self.entries, *entries))

    def choices(self, *, what_if: bool = False) -> tuple[str, ...]:
        """The canonical names the command line offers, in table order:
        every entry `in_cli`, or every `what_if` one."""
        return tuple(
            entry.name for entry in self.entries if (entry.what_if if what_if else entry.in_cli)
        )

    def entry(self, name: str) -> Entry:
        """The entry of canonical name `name`; a `KeyError` naming the family."""
        for entry in self.entries:
            if entry.name == name:
                return entry
        raise KeyError(f"no {self.family} named {name!r}: one of {[e.name for e in self.entries]}")

    def taking(self, option: str, *, what_if: bool = False) -> tuple[str, ...]:
        """The names among `choices` whose entry has `option` `settable`."""
        return tuple(
            name for name in self.choices(what_if=what_if) if option in self.entry(name).settable
        )

    def ray_names(self) -> dict[str, Entry]:
        """Ray Tune's names (lower case) for `create_*`, each to its entry."""
        return {alias: entry for entry in self.entries for alias in entry.ray_names}

    def as_before(self) -> Registry:
        """The registry that reads what older tunecores stored: each entry
        with a `stored_before` read as that instead."""
        return Registry(
            self.family,
            tuple(
                Entry(entry.name, entry.stored_before) if entry.stored_before is not None else entry
                for entry in self.entries
            ),
        )

    def union(self) -> object:
        """The union of the stored types, for a snapshot to decode (a
        runtime type: the static type of a policy is its protocol)."""
        stored = [
            entry.policy if entry.stored_as is None else entry.stored_as
            for entry in self.entries
            if (isinstance(entry.policy, type) or entry.stored_as is not None) and not entry.wraps
        ]
        if not stored:
            raise ValueError(f"{self.family} registry: no entry is a class, so none is stored")
        inner = functools.reduce(operator.or_, stored)
        wrappers = [
            entry.policy[inner]  # type: ignore[index]
            for entry in self.entries
            if isinstance(entry.policy, type) and entry.wraps
        ]
        return functools.reduce(operator.or_, wrappers, inner)
