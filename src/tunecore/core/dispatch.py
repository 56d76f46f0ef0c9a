"""Tables that dispatch on a value's type (the step's events, the loop's
commands), checked by mypy.

`handles(kind, handle)` ties a table's key to its handler: `handle` must
take a `kind` as its second argument, after the table's owner, and the
table's type then forgets which kind (a dict cannot say it). The rule that
makes this safe, which every table built with it keeps: a handler is only
looked up by `type(value)` and only called with that value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

_Owner = TypeVar("_Owner")
_Kind = TypeVar("_Kind")
_Return = TypeVar("_Return")
_Rest = ParamSpec("_Rest")


def handles(
    kind: type[_Kind], handle: Callable[Concatenate[_Owner, _Kind, _Rest], _Return]
) -> Callable[Concatenate[_Owner, Any, _Rest], _Return]:
    """`handle`, registered for values of type `kind` (see the module docstring)."""
    del kind
    return cast(Callable[Concatenate[_Owner, Any, _Rest], _Return], handle)
