"""`diagnose_serialization`: Ray Tune's help for a trainable that cannot be
sent to its workers, naming the global or closed-over variables that
cannot be serialized (a lock, an open file, a database client)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def diagnose_serialization(trainable: Callable[..., Any]) -> bool | set[str]:
    """True when `trainable` serializes as Ray sends it (cloudpickle);
    otherwise the names of the variables it reaches (its closure's and the
    globals it uses) that do not serialize, each printed with the error, as
    Ray's does. Move what it names into the trainable (create it there)."""
    if not callable(trainable):
        raise TypeError(f"trainable={trainable!r} is not callable")
    from ray import cloudpickle  # noqa: PLC0415 - Ray's import is slow

    dumps: Callable[[object], bytes] = cloudpickle.dumps  # as Ray serializes a trainable
    try:
        dumps(trainable)
    except Exception:
        pass
    else:
        print("Trainable is serializable")
        return True

    closure = inspect.getclosurevars(trainable)
    candidates = {**closure.globals, **closure.nonlocals}
    print(f"Trying to find the unserializable object among {len(candidates)} variables")
    failures: set[str] = set()
    for name, value in candidates.items():
        try:
            dumps(value)
        except Exception as error:
            failures.add(name)
            print(f"  {name} failed to serialize: {type(error).__name__}: {error}")
    if not failures:
        print(
            "Nothing the trainable reaches by name fails alone: look at the objects "
            "those refer to, or at the trainable's default arguments"
        )
    return failures
