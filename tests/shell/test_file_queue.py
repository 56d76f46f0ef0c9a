"""The storage's background writer: order, drain, errors, close."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable

import pytest

from tunecore.shell.storage.file_queue import FileQueue, FileWriterStoppedError, Job


def test_jobs_run_in_order_off_the_caller_and_drain_waits_for_them() -> None:
    queue = FileQueue(background=True, max_behind=50)
    ran: list[tuple[int, str]] = []
    gate = threading.Event()

    def job(n: int) -> None:
        if n == 0:
            gate.wait()
        ran.append((n, threading.current_thread().name))

    for n in range(50):
        queue.submit("job", functools.partial(job, n))
    assert ran == []  # the first job holds the thread; the caller went on
    gate.set()
    queue.drain()
    assert [n for n, _ in ran] == list(range(50))
    assert {name for _, name in ran} == {"tunecore-file-writer"}
    queue.close()


def test_a_failing_job_is_logged_once_per_kind_and_the_next_jobs_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue = FileQueue(background=True)
    ran: list[int] = []

    def fail() -> None:
        raise OSError("disk full")

    with caplog.at_level(logging.ERROR, logger="tunecore.shell.storage.file_queue"):
        for n in range(3):
            queue.submit("result.json", fail)
            queue.submit("result.json", functools.partial(ran.append, n))
        queue.close()
    assert ran == [0, 1, 2]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "result.json" in errors[0].getMessage()
    assert "OSError" in errors[0].getMessage()


def writers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "tunecore-file-writer"}


def test_after_close_jobs_run_inline_and_no_thread_is_left() -> None:
    others = writers()  # another experiment's, still running in this process
    queue = FileQueue(background=True)
    queue.submit("a", lambda: None)
    assert writers() - others  # this queue's
    queue.close()
    ran: list[str] = []
    queue.submit("b", lambda: ran.append(threading.current_thread().name))
    assert ran == [threading.current_thread().name]
    assert not writers() - others


def test_inline_errors_reach_the_caller() -> None:
    queue = FileQueue(background=False)

    def fail() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        queue.submit("result.json", fail)


def test_settle_runs_when_the_queue_runs_dry_and_before_drain_returns() -> None:
    settled: list[int] = []
    ran: list[int] = []
    queue = FileQueue(background=True, max_behind=11, settle=lambda: settled.append(len(ran)))
    gate = threading.Event()

    def wait_for_the_gate() -> None:
        gate.wait()

    queue.submit("gate", wait_for_the_gate)
    for n in range(10):
        queue.submit("job", functools.partial(ran.append, n))
    gate.set()
    queue.drain()
    # Not after each job: once the ten had run (and again for the drain).
    assert settled
    assert set(settled) == {10}
    queue.close()


def test_inline_settle_follows_every_job_even_one_that_fails() -> None:
    settled: list[str] = []
    queue = FileQueue(background=False, settle=lambda: settled.append("settled"))
    queue.submit("a", lambda: None)

    def fail() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        queue.submit("b", fail)
    assert settled == ["settled", "settled"]


def test_a_failing_settle_is_logged_and_drain_still_returns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def fail() -> None:
        raise OSError("disk full")

    queue = FileQueue(background=True, settle=fail)
    with caplog.at_level(logging.ERROR, logger="tunecore.shell.storage.file_queue"):
        queue.submit("a", lambda: None)
        queue.drain()
        queue.close()
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "held writes" in errors[0].getMessage()


def test_jobs_held_by_a_block_reach_the_writer_together_as_it_ends() -> None:
    settled: list[list[int]] = []
    ran: list[int] = []
    queue = FileQueue(background=True, settle=lambda: settled.append(list(ran)))
    queue.submit("before", functools.partial(ran.append, 0))
    queue.drain()
    with queue.held():
        for n in range(1, 11):
            queue.submit("job", functools.partial(ran.append, n))
        queue.submit_all([("a", functools.partial(ran.append, 11)), ("b", lambda: ran.append(12))])
        assert queue._jobs.empty()  # nothing reached the writer's queue yet
    queue.drain()
    assert ran == list(range(13))
    # One hand-over: the writer ran dry only once the whole round had run.
    assert all(len(seen) in (1, 13) for seen in settled)
    queue.close()


def test_drain_and_close_inside_a_held_block_run_what_it_held() -> None:
    ran: list[int] = []
    queue = FileQueue(background=True)
    with queue.held():
        queue.submit("job", functools.partial(ran.append, 1))
        queue.drain()
        assert ran == [1]  # a reader draining in the round finds the round's files
        queue.submit("job", functools.partial(ran.append, 2))
        with queue.held():  # part of the outer block
            queue.submit("job", functools.partial(ran.append, 3))
        queue.close()
        assert ran == [1, 2, 3]
        queue.submit("job", functools.partial(ran.append, 4))  # closed: inline
        assert ran == [1, 2, 3, 4]


def test_a_block_that_raises_still_hands_its_jobs_over() -> None:
    ran: list[int] = []
    queue = FileQueue(background=True)

    def round_interrupted() -> None:
        with queue.held():
            queue.submit("job", functools.partial(ran.append, 1))
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        round_interrupted()
    queue.drain()
    assert ran == [1]
    queue.close()


def test_jobs_submitted_together_fail_each_on_its_own(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []

    def fail() -> None:
        raise OSError("disk full")

    jobs: list[tuple[str, Job]] = [
        ("result.json", fail),
        ("progress.csv", functools.partial(ran.append, "csv")),
    ]
    queue = FileQueue(background=True)
    with caplog.at_level(logging.ERROR, logger="tunecore.shell.storage.file_queue"):
        queue.submit_all(jobs)
        queue.close()
    assert ran == ["csv"]
    (error,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "result.json" in error.getMessage()

    inline = FileQueue(background=False)
    with pytest.raises(OSError, match="disk full"):
        inline.submit_all(jobs)
    assert ran == ["csv", "csv"]  # the job after the failing one ran before the error


JobsFor = Callable[[list[int]], list[tuple[str, Job]]]


def _recording_jobs(log: list[tuple[str, int]], made: list[str]) -> JobsFor:
    """A `jobs_for` whose two jobs log each item under their kind."""

    def jobs_for(items: list[int]) -> list[tuple[str, Job]]:
        made.append("jobs")
        return [
            (kind, functools.partial(lambda k: log.extend((k, i) for i in items), kind))
            for kind in ("result.json", "progress.csv")
        ]

    return jobs_for


def test_batched_items_with_one_key_in_a_round_join_the_first_calls_jobs() -> None:
    log: list[tuple[str, int]] = []
    made: list[str] = []
    jobs_for = _recording_jobs(log, made)
    queue = FileQueue(background=True)
    with queue.held():
        for item in range(5):
            queue.submit_batched("trial-a", item, jobs_for)
    queue.drain()
    assert made == ["jobs"]  # built once for the five
    assert log == [("result.json", i) for i in range(5)] + [("progress.csv", i) for i in range(5)]
    queue.close()


def test_a_batch_keeps_its_place_among_other_jobs_and_other_keys() -> None:
    log: list[tuple[str, int]] = []
    made: list[str] = []
    jobs_for = _recording_jobs(log, made)
    queue = FileQueue(background=True)
    with queue.held():
        queue.submit_batched("trial-a", 1, jobs_for)
        queue.submit_batched("trial-a", 2, jobs_for)
        queue.submit_batched("trial-b", 3, jobs_for)
        queue.submit_batched("trial-a", 4, jobs_for)  # a new batch: trial-b came between
        queue.submit("close", lambda: log.append(("close", 0)))
        queue.submit_batched("trial-a", 5, jobs_for)
    queue.drain()
    kinds = ("result.json", "progress.csv")
    assert log == [
        *[(k, i) for k in kinds for i in (1, 2)],
        *[(k, 3) for k in kinds],
        *[(k, 4) for k in kinds],
        ("close", 0),
        *[(k, 5) for k in kinds],
    ]
    assert len(made) == 4
    queue.close()


def test_no_item_joins_jobs_handed_to_the_writer() -> None:
    """After a round ends (or a drain), the writer may be running the
    batch's jobs: the next item starts jobs of its own."""
    log: list[tuple[str, int]] = []
    made: list[str] = []
    jobs_for = _recording_jobs(log, made)
    queue = FileQueue(background=True)
    gate = threading.Event()

    def wait_for_the_gate() -> None:
        gate.wait()

    queue.submit("gate", wait_for_the_gate)
    with queue.held():
        queue.submit_batched("trial-a", 1, jobs_for)
    with queue.held():
        queue.submit_batched("trial-a", 2, jobs_for)
        gate.set()
        queue.drain()  # a reader in the round: the writer runs the round so far
        queue.submit_batched("trial-a", 3, jobs_for)
    queue.drain()
    kinds = ("result.json", "progress.csv")
    assert log == [(k, i) for i in (1, 2, 3) for k in kinds]
    assert len(made) == 3
    queue.close()


def test_batched_outside_a_round_and_inline_write_at_once() -> None:
    log: list[tuple[str, int]] = []
    made: list[str] = []
    inline = FileQueue(background=False)
    for item in (1, 2):
        inline.submit_batched("trial-a", item, _recording_jobs(log, made))
        assert log[-1] == ("progress.csv", item)  # written before the call returned
    with inline.held():
        inline.submit_batched("trial-a", 3, _recording_jobs(log, made))
        assert log[-1] == ("progress.csv", 3)
    assert len(made) == 3

    background = FileQueue(background=True)
    for item in (4, 5):
        background.submit_batched("trial-a", item, _recording_jobs(log, made))
    background.drain()
    assert log[-4:] == [
        ("result.json", 4),
        ("progress.csv", 4),
        ("result.json", 5),
        ("progress.csv", 5),
    ]
    assert len(made) == 5
    background.close()


def test_the_caller_waits_once_the_writer_is_max_behind_items_behind() -> None:
    """Queued jobs hold what they write: a writer far behind a fast loop
    held thousands of trials' results at once (issue 41's driver memory).
    An item counts until it has run; the third waits for the first."""
    queue = FileQueue(background=True, max_behind=2)
    started, gate = threading.Event(), threading.Event()
    ran: list[int] = []

    def job(n: int) -> None:
        if n == 0:
            started.set()
            gate.wait()
        ran.append(n)

    queue.submit("job", functools.partial(job, 0))
    started.wait()
    queue.submit("job", functools.partial(job, 1))
    third = threading.Thread(target=queue.submit, args=("job", functools.partial(job, 2)))
    assert not queue._room.acquire(blocking=False)  # both places taken: a third waits
    third.start()
    gate.set()
    third.join()
    queue.drain()
    assert ran == [0, 1, 2]
    assert queue._room.acquire(blocking=False)  # every place given back
    queue.close()


class _WriterKilled(BaseException):
    """What a job may raise that is no `Exception` (`SystemExit` from a
    library's `sys.exit()`, a `KeyboardInterrupt`): it ends the thread."""


@pytest.mark.timeout(60)  # before the fix, the waiting caller waited forever
def test_a_writer_ended_by_a_base_exception_wakes_its_waiters_with_a_clear_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue = FileQueue(background=True, max_behind=2)
    started, gate = threading.Event(), threading.Event()
    ran: list[int] = []

    def job(n: int) -> None:
        if n == 0:
            started.set()
            gate.wait()
            raise _WriterKilled("the writer's end")
        ran.append(n)

    queue.submit("job", functools.partial(job, 0))
    started.wait()
    queue.submit("job", functools.partial(job, 1))
    assert not queue._room.acquire(blocking=False)  # both places taken
    raised: list[BaseException] = []

    def submit_third() -> None:
        try:
            queue.submit("job", functools.partial(job, 2))
        except BaseException as error:
            raised.append(error)

    third = threading.Thread(target=submit_third)
    third.start()
    gate.set()
    third.join()  # returns: the waiter was woken
    assert len(raised) == 1
    assert isinstance(raised[0], FileWriterStoppedError)
    message = str(raised[0])
    assert "_WriterKilled" in message
    assert "the writer's end" in message
    assert "resume" in message
    assert ran == []  # the queued job was dropped, not run by a dead thread
    # Every later call raises the same at once instead of waiting.
    with pytest.raises(FileWriterStoppedError):
        queue.submit("job", functools.partial(job, 3))
    with pytest.raises(FileWriterStoppedError):
        queue.drain()
    with caplog.at_level(logging.ERROR, logger="tunecore.shell.storage.file_queue"):
        queue.close()  # returns, and says what was lost
    assert any("_WriterKilled" in r.getMessage() for r in caplog.records)


@pytest.mark.timeout(60)
def test_a_drain_waiting_when_the_writer_dies_raises_instead_of_waiting() -> None:
    queue = FileQueue(background=True, max_behind=4)
    started, gate = threading.Event(), threading.Event()

    def dying_job() -> None:
        started.set()
        gate.wait()
        raise SystemExit(3)

    queue.submit("job", dying_job)
    started.wait()
    raised: list[BaseException] = []
    waiting = threading.Event()

    def drain() -> None:
        try:
            waiting.set()
            queue.drain()
        except BaseException as error:
            raised.append(error)

    drainer = threading.Thread(target=drain)
    drainer.start()
    waiting.wait()
    gate.set()
    drainer.join()
    assert len(raised) == 1
    assert isinstance(raised[0], FileWriterStoppedError)
    assert "SystemExit" in str(raised[0])
    queue.close()


@pytest.mark.timeout(60)
def test_a_settle_ending_the_writer_stops_the_drain_that_ran_it() -> None:
    def settle() -> None:
        raise KeyboardInterrupt

    queue = FileQueue(background=True, settle=settle)
    queue.submit("job", lambda: None)
    with pytest.raises(FileWriterStoppedError, match="KeyboardInterrupt"):
        queue.drain()
    queue.close()
