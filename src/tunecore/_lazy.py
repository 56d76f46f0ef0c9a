"""Package attributes imported on first use (PEP 562 `__getattr__`).

A Ray worker imports `tunecore.shell...` and `tunecore.core...` modules to
host a trial, and Python runs every enclosing package's `__init__` first:
re-exports there would load the driver's half of the library into each
new worker (tens of milliseconds before its first trial). A package that
re-exports names declares where each lives and imports it when it is
first asked for; its `TYPE_CHECKING` block names the same ones for type
checkers (`tests/test_package_names.py` checks that they agree).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping


def lazy_attributes(
    package: str,
    homes: Mapping[str, str],
    public: Iterable[str],
    missing: Callable[[str], object] | None = None,
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`: `homes` maps each name
    to the module holding it (the name itself when the module is the
    package's submodule of that name); a name is kept in the package once
    imported. A name not in `homes` goes to `missing` when given (which
    raises the error that name deserves)."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            if missing is not None:
                return missing(name)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home)
        value = module if home == f"{package}.{name}" else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return __getattr__, __dir__
