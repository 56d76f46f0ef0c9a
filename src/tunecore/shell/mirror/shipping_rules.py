"""The shipper's rules, pure (`shell.mirror.shipper` carries them out): when
a changed trial file is uploaded, and what a compaction of the stored log
merges. Tests call them without a thread, a store or a clock.

- **Trial files**: `params.json` and `error.txt` whenever they change; any
  other file once it stopped changing between two rounds, and while it
  keeps growing, after `GROW_WAIT_S` if it grew by `GROW_RATIO` since its
  last upload, else after `STALE_S` (whole re-uploads of a growing file
  cost a bounded multiple of its size, never its size squared).
- **Compaction**: the newest `COMPACT_COUNT` log objects are merged into
  one while they are all under `COMPACT_BELOW` bytes and were made by as
  many compactions (a counter in base `COMPACT_COUNT`): a byte is uploaded
  again once per compaction level, and the chain stays a few dozen objects
  long.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tunecore.shell.mirror.fetched_files import Signature
from tunecore.shell.mirror.stored_state import Segment

COMPACT_COUNT = 16
"""How many consecutive small log objects of one generation are merged."""
COMPACT_BELOW = 4 << 20
"""Log objects at least this large are never merged again."""
GROW_WAIT_S = 60.0
GROW_RATIO = 0.10
STALE_S = 600.0
EAGER_FILES = frozenset({"params.json", "error.txt"})
"""Trial files uploaded on every change: small, rarely written, and what a
reader looks at first (a trial's config, why it failed)."""


@dataclass
class Tracked:
    """What the shipper knows about one local file."""

    uploaded: Signature | None = None  # what was last uploaded
    uploaded_size: int = 0
    since: float = 0.0  # when it was last uploaded (or first seen)
    seen: Signature | None = None  # what it was at the previous round
    needs_log: int = 0  # snapshots: the log bytes storage must hold first


def upload_due(rel: str, tracked: Tracked, signature: Signature, now: float) -> bool:
    """Whether the changed trial file `rel` (now `signature`) is uploaded
    at `now` (see the module docstring)."""
    if rel.rpartition("/")[2] in EAGER_FILES or signature == tracked.seen:
        return True
    waited = now - tracked.since
    grown = signature[0] >= tracked.uploaded_size * (1 + GROW_RATIO)
    return (waited >= GROW_WAIT_S and grown) or waited >= STALE_S


def next_merge(chain: Sequence[Segment], lease: int) -> Segment | None:
    """The object that merges the newest `COMPACT_COUNT` objects of
    `chain` (written by the driver of lease generation `lease`), or None
    if they are not to be merged (see the module docstring)."""
    if len(chain) < COMPACT_COUNT:
        return None
    tail = chain[-COMPACT_COUNT:]
    generation = tail[0].generation
    if any(s.generation != generation or s.size >= COMPACT_BELOW for s in tail):
        return None
    return Segment(tail[0].start, tail[-1].end, lease, generation + 1)
