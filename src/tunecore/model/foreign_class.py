"""A class of another package found by name in an object's MRO.

tunecore takes some of Ray's own objects as its own (a library built on
Ray Tune hands them over in code no import rewriting reaches), and refuses
others naming what to build instead, without importing Ray's modules (a
script that never imported `ray.tune` must not pay for it, nor need its
dependencies). Such a class is known by its module and name alone; this is
the one place that rule is written.
"""

from __future__ import annotations

from collections.abc import Collection


def foreign_base(cls: type, package: str, names: Collection[str] | None = None) -> type | None:
    """The first class in `cls`'s MRO defined in the module `package` or a
    module under it (`package.x.y`), and named one of `names` (any name when
    None); None if there is none."""
    under = package + "."
    for base in cls.__mro__:
        module = base.__module__
        if (module == package or module.startswith(under)) and (
            names is None or base.__name__ in names
        ):
            return base
    return None
