"""Trials started on the same worker keep one `Location` between them: a
finished trial keeps its location as long as the experiment."""

from __future__ import annotations

from tunecore.model import Location, TrialStarted
from tunecore.shell.executors.base import Operation, Pending, completion_event


def started(trial_id: str, hostname: str | None, pid: int | None) -> Location:
    event = completion_event(trial_id, Pending(Operation.ASSIGN, None), (hostname, pid), at=1.0)
    assert isinstance(event, TrialStarted)
    return event.location


def test_trials_on_one_worker_share_its_location() -> None:
    first, second = started("a_00000", "node-1", 4242), started("a_00001", "node-1", 4242)
    assert first is second
    assert first == Location(hostname="node-1", pid=4242)


def test_trials_on_other_workers_keep_theirs() -> None:
    here = started("a_00000", "node-1", 4242)
    assert started("a_00001", "node-1", 4243) == Location(hostname="node-1", pid=4243)
    assert started("a_00002", "node-2", 4242) == Location(hostname="node-2", pid=4242)
    assert started("a_00003", None, None) == Location()
    assert here == Location(hostname="node-1", pid=4242)
