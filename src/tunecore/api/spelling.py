"""How a message names a setting the user gave: as the Python API spells it
(`TuneConfig(seed=7)`), or, while the command line runs, as the flag the
user typed (`--seed 7`). The command line installs its one table of flags
(`tunecore.cli.flags`) around each command; every message that names a
setting goes through `setting`, so none is written twice."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping

_FLAGS: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "setting_flags", default=None
)


def setting(owner: str, field: str, value: object = ...) -> str:
    """`owner(field=value)` (`TuneConfig(seed=7)`; `...` for no value), or
    the field's flag while flags are in force (`--seed 7`, `--metric`)."""
    flags = _FLAGS.get()
    flag = None if flags is None else flags.get(field)
    shown = "..." if value is ... else str(value)
    if flag is None:
        return f"{owner}({field}={shown})"
    return flag if value is ... else f"{flag} {shown}"


@contextlib.contextmanager
def spelled_as_flags(flags: Mapping[str, str]) -> Iterator[None]:
    """Within the block, `setting` names each field in `flags` by its flag."""
    token = _FLAGS.set(flags)
    try:
        yield
    finally:
        _FLAGS.reset(token)
