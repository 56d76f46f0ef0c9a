"""The shipper's pure rules (`shell/mirror/shipping_rules.py`), without a
thread, a store or a clock."""

from __future__ import annotations

from tunecore.shell.mirror.shipping_rules import (
    COMPACT_BELOW,
    COMPACT_COUNT,
    GROW_WAIT_S,
    STALE_S,
    Tracked,
    next_merge,
    upload_due,
)
from tunecore.shell.mirror.stored_state import Segment


def test_compaction_counts_in_base_compact_count() -> None:
    chain = [Segment(i * 10, i * 10 + 10) for i in range(COMPACT_COUNT - 1)]
    assert next_merge(chain, 3) is None  # one short
    chain.append(Segment(chain[-1].end, chain[-1].end + 10))
    merged = next_merge(chain, 3)
    assert merged == Segment(0, COMPACT_COUNT * 10, 3)
    assert merged.generation == 1
    # A merged object and newer small ones are of different levels: not merged.
    assert next_merge([merged, *chain[1:]], 3) is None
    # An object too large is never merged again.
    big = [Segment(0, COMPACT_BELOW), *chain[1:]]
    assert next_merge(big, 3) is None


def test_a_growing_trial_file_waits_a_file_that_settled_goes() -> None:
    tracked = Tracked(uploaded=(100, 1, 1), uploaded_size=100, since=0.0, seen=(105, 2, 1))
    assert upload_due("t/params.json", tracked, (120, 3, 1), now=1.0)  # eager
    assert upload_due("t/result.json", tracked, (105, 2, 1), now=1.0)  # stopped changing
    assert not upload_due("t/result.json", tracked, (109, 3, 1), now=GROW_WAIT_S)  # grew < 10%
    assert upload_due("t/result.json", tracked, (111, 3, 1), now=GROW_WAIT_S)
    assert upload_due("t/result.json", tracked, (101, 3, 1), now=STALE_S)
