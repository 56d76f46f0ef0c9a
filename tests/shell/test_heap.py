"""The heap frozen during a run (`tunecore.shell.heap`): what it freezes,
what it leaves alone, and that a run of `Tuner.fit` gives the heap back."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

import tunecore
from tunecore.shell.heap import long_lived_heap_frozen


class Node:
    """A container the cyclic collector tracks (it can hold itself)."""

    def __init__(self) -> None:
        self.me: object = self


def dropped_cycle() -> weakref.ref[Node]:
    """A cycle that is unreachable once this returns; only the cyclic
    collector can free it."""
    return weakref.ref(Node())


@pytest.fixture(autouse=True)
def clean_collector() -> Iterator[None]:
    """Each test starts with a collector that is on and froze nothing, and
    leaves it so."""
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    yield
    gc.enable()
    gc.unfreeze()


def test_what_exists_at_the_start_is_frozen_for_the_block_and_given_back() -> None:
    before = dropped_cycle()
    with long_lived_heap_frozen():
        assert gc.get_freeze_count() > 0
        gc.collect()
        assert before() is not None  # frozen: no collection walks it
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert before() is None


def test_what_the_block_creates_is_collected_as_before() -> None:
    with long_lived_heap_frozen():
        during = dropped_cycle()
        gc.collect()
        assert during() is None


def test_the_heap_is_given_back_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError, match="trial"), long_lived_heap_frozen():
        raise RuntimeError("trial")
    assert gc.get_freeze_count() == 0


def test_a_freeze_of_the_process_own_is_left_alone() -> None:
    # (Freeze counts are not compared: a frozen object freed by its last
    # reference leaves the count at any time.)
    frozen_by_the_process = dropped_cycle()
    gc.freeze()
    after_its_freeze = dropped_cycle()
    with long_lived_heap_frozen():
        gc.collect()
        assert after_its_freeze() is None  # nothing was frozen again
    gc.collect()
    assert frozen_by_the_process() is not None  # its freeze still holds


def test_a_collector_turned_off_is_left_alone() -> None:
    gc.disable()
    with long_lived_heap_frozen():
        assert gc.get_freeze_count() == 0
    assert not gc.isenabled()


def test_nested_runs_share_one_freeze_the_outer_gives_it_back() -> None:
    before = dropped_cycle()
    with long_lived_heap_frozen():
        between = dropped_cycle()
        with long_lived_heap_frozen():
            gc.collect()
            assert between() is None  # the inner run froze nothing more
        gc.collect()
        assert before() is not None  # the inner run's end kept the freeze
    gc.collect()
    assert before() is None


def test_concurrent_runs_the_last_out_gives_the_heap_back() -> None:
    first_in, second_done = threading.Event(), threading.Event()
    seen: list[int] = []

    def first() -> None:
        with long_lived_heap_frozen():
            first_in.set()
            second_done.wait(timeout=10)
            seen.append(gc.get_freeze_count())

    thread = threading.Thread(target=first)
    thread.start()
    assert first_in.wait(timeout=10)
    with long_lived_heap_frozen():
        pass
    second_done.set()
    thread.join(timeout=10)
    assert len(seen) == 1
    assert seen[0] > 0  # the second run's exit kept the first's freeze
    assert gc.get_freeze_count() == 0


def freeze_count(config: dict[str, object]) -> None:
    tunecore.report({"frozen": gc.get_freeze_count()})


def test_fit_runs_with_the_heap_frozen_and_gives_it_back(tmp_path: Path) -> None:
    results = tunecore.Tuner(
        freeze_count,
        run_config=tunecore.RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    ).fit()
    frozen = results[0].metrics["frozen"]
    assert isinstance(frozen, int)
    assert frozen > 0
    assert gc.get_freeze_count() == 0
