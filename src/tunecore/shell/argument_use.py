"""Whether a function may read one of its arguments, from its bytecode.

The loop asks it of the callbacks' hooks: `trials` (every trial's view,
O(trials) to build) is built only for a hook that may read it, and most
user hooks written to Ray's signature take `trials` and never look at it.

The answer errs one way only: "may read" whenever it cannot be sure (not a
plain Python function, the argument captured by a closure or gathered into
`*args` that is read, a frame or `locals()` reachable from the body), so a
wrong answer costs a list built for nothing, never a hook that reads an
empty one.
"""

from __future__ import annotations

import dis
import functools
import inspect
from types import CodeType, FunctionType

_DYNAMIC = frozenset({"locals", "vars", "eval", "exec", "_getframe", "currentframe", "f_locals"})
"""Names through which a body can reach its arguments without naming them."""


def may_read_argument(function: object, position: int) -> bool:
    """Whether `function`, called with `position` positional arguments
    before the one asked about (a method's `self` counted), may read it."""
    if not isinstance(function, FunctionType):
        return True
    return _reads(function.__code__, position)


@functools.lru_cache(maxsize=1024)
def _reads(code: CodeType, position: int) -> bool:
    if position < code.co_argcount:
        name = code.co_varnames[position]
    elif code.co_flags & inspect.CO_VARARGS:
        name = code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
    else:
        return True  # the call fails: let it, as the hook would
    if name in code.co_cellvars or _DYNAMIC & set(code.co_names):
        return True
    return any(_loads(instruction, name) for instruction in dis.get_instructions(code))


def _loads(instruction: dis.Instruction, name: str) -> bool:
    if instruction.opname.startswith(("STORE_", "DELETE_")):
        return False
    value = instruction.argval
    return value == name or (isinstance(value, tuple) and name in value)
