"""Keep the driver's long-lived heap out of the cyclic garbage collector
while an experiment runs.

Why: a driver that imported Ray holds about 100,000 container objects
(modules, classes, Ray's and pyarrow's tables) before the experiment
creates any. CPython's collector walks all of them at every full
collection, and an experiment creates enough objects that live a while
(results in flight, events, trial states) to set one off every few
thousand results: 40-50 ms each on a 2-core machine, about a tenth of a
200-trial run (docs/speed.md, "The eighth profile"). `gc.freeze()` moves
every object that exists when the run starts into the permanent
generation, which no collection walks; `gc.unfreeze()` hands them back
when it ends.

Rules callers rely on:
- Only what exists when the run starts is frozen: everything the run
  creates is collected exactly as before.
- Unreachable cycles that existed before the run are collected after it,
  not during it (their memory is held that long), and `gc.get_objects()`
  does not list the frozen objects while the run goes on.
- After the run the collector's next full collection walks the whole heap
  once more, as one of the collections the run skipped would have.
- A process that has frozen objects itself when the run starts
  (`gc.get_freeze_count() > 0`), or turned the collector off, is left
  alone: unfreezing would undo its own freeze.
- Runs nested or concurrent in one process share one freeze: the first in
  freezes, the last out unfreezes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_runs = 0  # runs inside the freeze this module made; 0 when it made none


@contextmanager
def long_lived_heap_frozen() -> Iterator[None]:
    """Freeze the heap for the `with` block (see the module docstring)."""
    global _runs  # noqa: PLW0603 - one freeze per process, so one counter
    with _lock:
        ours = _runs > 0 or (gc.isenabled() and gc.get_freeze_count() == 0)
        if ours:
            if _runs == 0:
                gc.freeze()
            _runs += 1
    try:
        yield
    finally:
        if ours:
            with _lock:
                _runs -= 1
                if _runs == 0:
                    gc.unfreeze()
