"""The storage's background writer: order, drain, errors, close."""

from __future__ import annotations

import functools
import logging
import threading

import pytest

from tunecore.shell.file_queue import FileQueue, Job


def test_jobs_run_in_order_off_the_caller_and_drain_waits_for_them() -> None:
    queue = FileQueue(background=True)
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

    with caplog.at_level(logging.ERROR, logger="tunecore.shell.file_queue"):
        for n in range(3):
            queue.submit("result.json", fail)
            queue.submit("result.json", functools.partial(ran.append, n))
        queue.close()
    assert ran == [0, 1, 2]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "result.json" in errors[0].getMessage()
    assert "OSError" in errors[0].getMessage()


def test_after_close_jobs_run_inline_and_no_thread_is_left() -> None:
    queue = FileQueue(background=True)
    queue.submit("a", lambda: None)
    queue.close()
    ran: list[str] = []
    queue.submit("b", lambda: ran.append(threading.current_thread().name))
    assert ran == [threading.current_thread().name]
    assert not [t for t in threading.enumerate() if t.name == "tunecore-file-writer"]


def test_inline_errors_reach_the_caller() -> None:
    queue = FileQueue(background=False)

    def fail() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        queue.submit("result.json", fail)


def test_settle_runs_when_the_queue_runs_dry_and_before_drain_returns() -> None:
    settled: list[int] = []
    ran: list[int] = []
    queue = FileQueue(background=True, settle=lambda: settled.append(len(ran)))
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
    with caplog.at_level(logging.ERROR, logger="tunecore.shell.file_queue"):
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
    with caplog.at_level(logging.ERROR, logger="tunecore.shell.file_queue"):
        queue.submit_all(jobs)
        queue.close()
    assert ran == ["csv"]
    (error,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "result.json" in error.getMessage()

    inline = FileQueue(background=False)
    with pytest.raises(OSError, match="disk full"):
        inline.submit_all(jobs)
    assert ran == ["csv", "csv"]  # the job after the failing one ran before the error
