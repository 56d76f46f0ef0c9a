"""Reading an experiment back builds an object per trial, per result and
per config value: millions of them at 100,000 trials, none in a reference
cycle (decoded structs, dicts, strings, paths), all freed by reference
counting. Python's cyclic collector still walks every live object at each
of its oldest generation's passes, and it starts one each time the objects
allocated since the last pass outgrow a share of those alive, so a read
that builds N objects pays for walking them again and again: 40% of
`ResultGrid.from_path` at 100,000 trials (7.9 s against 4.6 s, issue 41).
A read pauses it: no cycle is left behind, and the collector resumes
(if it ran before) when the read ends, raised or not."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the `with` body (a no-op if
    it is off already, as in a nested read)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
