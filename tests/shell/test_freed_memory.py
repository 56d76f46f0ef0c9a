"""Freed heap memory goes back to the OS (glibc's `malloc_trim`)."""

from __future__ import annotations

import os
import sys

import pytest

from tunecore.shell.freed_memory import release_freed_memory

CHUNK = 64 * 1024  # below glibc's mmap threshold: from the heap
CHUNKS = 320  # 20 MB


def resident_kb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_freed_heap_memory_below_a_live_block_leaves_the_resident_set() -> None:
    if not release_freed_memory():
        pytest.skip("this C library has no malloc_trim")
    freed = [b"x" * CHUNK for _ in range(CHUNKS)]  # touched pages
    pinned = [b"y" * CHUNK for _ in range(4)]  # above them, alive
    del freed
    before = resident_kb()
    assert release_freed_memory()
    after = resident_kb()
    assert before - after > CHUNK * CHUNKS / 1024 / 2, (before, after)
    assert len(pinned) == 4
