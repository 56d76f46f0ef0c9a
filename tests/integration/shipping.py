"""Ray workers do not have the tests on their path: a test module's
trainables go to them pickled by value."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

import cloudpickle


@contextmanager
def shipped_by_value(module: ModuleType) -> Iterator[None]:
    """Pickle `module`'s functions and classes by value meanwhile."""
    cloudpickle.register_pickle_by_value(module)
    try:
        yield
    finally:
        cloudpickle.unregister_pickle_by_value(module)
