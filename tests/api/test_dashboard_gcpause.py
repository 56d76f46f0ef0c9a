"""The dashboard's pause of the garbage collector while a route answers."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tunecore.api.dashboard.gcpause import collector_paused


@pytest.fixture
def collector_on() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.enable()
    yield
    gc.enable() if enabled else gc.disable()


def test_overlapping_requests_enable_it_again_only_when_the_last_ends(collector_on: None) -> None:
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_in_the_route_still_enables_it_again(collector_on: None) -> None:
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("route failed")
    assert gc.isenabled()


def test_a_process_that_disabled_it_keeps_it_disabled(collector_on: None) -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()
