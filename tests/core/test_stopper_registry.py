"""The built-in stoppers' registry is the one table: the union a snapshot
decodes is its entries (plus their combination), and the shell counts
exactly those as built in."""

from __future__ import annotations

import typing

from tunecore.core.stoppers import BuiltinStopper, SingleStopper
from tunecore.core.stoppers.registry import COMBINED, STOPPERS
from tunecore.shell.stoppers import BUILTIN_TYPES


def test_the_decoded_union_is_the_registrys() -> None:
    registered = {entry.resolve() for entry in STOPPERS.entries}
    assert set(typing.get_args(SingleStopper)) == registered
    assert set(typing.get_args(BuiltinStopper)) == registered | {COMBINED}


def test_the_shell_counts_the_registrys_stoppers_as_built_in() -> None:
    assert set(BUILTIN_TYPES) == {entry.resolve() for entry in STOPPERS.entries} | {COMBINED}
