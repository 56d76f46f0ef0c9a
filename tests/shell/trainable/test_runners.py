"""The threads that run training functions (`runners.py`)."""

from __future__ import annotations

import logging
import os
import threading

import pytest

from tunecore.shell.trainable import runners

WAIT_S = 10.0  # generous: each wait ends as soon as what it waits for happens


def run_and_wait(name: str = "tunecore-trial-probe") -> tuple[threading.Thread, str]:
    """Start a call that records its thread and name; wait until it returns."""
    seen: list[tuple[threading.Thread, str]] = []

    def record() -> None:
        thread = threading.current_thread()
        seen.append((thread, thread.name))

    run = runners.start(record, name=name)
    assert run.finished.wait(WAIT_S)
    return seen[0]


@pytest.fixture
def own_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of the test's own, so no other test's runners are in it."""
    monkeypatch.setattr(runners, "_POOL", runners._Pool())


def waiting_runners() -> set[threading.Thread]:
    """The threads of the test's pool waiting for a call."""
    return {runner.thread for runner in runners._POOL._idle}


def test_a_call_runs_in_another_thread_named_while_it_runs() -> None:
    thread, name = run_and_wait()
    assert thread is not threading.current_thread()
    assert name == "tunecore-trial-probe"
    assert thread.name == runners.IDLE_NAME  # renamed before `finished` is set


@pytest.mark.usefixtures("own_pool")
def test_the_next_calls_thread_is_started_before_it_is_asked_for() -> None:
    first, _ = run_and_wait()
    first.join(WAIT_S)  # its run done, it ends, and the one it started waits
    (ready,) = waiting_runners() - {first}
    second, _ = run_and_wait()
    assert second is ready
    assert not first.is_alive()


def test_each_call_runs_in_a_thread_that_ran_nothing_before() -> None:
    """Thread-local state one trial's function leaves (a C extension's
    per-thread mode, say) never reaches the next one's."""
    local = threading.local()
    seen: list[object] = []

    def visit() -> None:
        seen.append(getattr(local, "left_by_an_earlier_run", None))
        local.left_by_an_earlier_run = True

    threads = []
    for _ in range(3):
        thread, _ = run_and_wait()
        threads.append(thread)
        assert runners.start(visit, name="tunecore-trial-local").finished.wait(WAIT_S)
    assert seen == [None, None, None]
    assert len(set(threads)) == 3


def test_a_call_that_has_not_returned_keeps_its_thread() -> None:
    release, entered = threading.Event(), threading.Event()
    blocked_in: list[threading.Thread] = []

    def block() -> None:
        blocked_in.append(threading.current_thread())
        entered.set()
        release.wait(WAIT_S)

    blocked = runners.start(block, name="tunecore-trial-blocked")
    try:
        assert entered.wait(WAIT_S)
        other, _ = run_and_wait()
        assert not blocked.finished.is_set()
        assert other is not blocked_in[0]
    finally:
        release.set()
    assert blocked.finished.wait(WAIT_S)


def test_a_call_that_raises_is_logged_and_the_next_call_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def fail() -> None:
        raise RuntimeError("boom in a runner")

    with caplog.at_level(logging.ERROR, logger=runners.__name__):
        assert runners.start(fail, name="tunecore-trial-fails").finished.wait(WAIT_S)
    assert "boom in a runner" in caplog.text
    _, name = run_and_wait()
    assert name == "tunecore-trial-probe"


@pytest.mark.usefixtures("own_pool")
def test_a_waiting_thread_ends_after_its_idle_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runners, "IDLE_S", 0.01)
    first, _ = run_and_wait()
    first.join(WAIT_S)  # ended, after starting the one that waits for the next call
    (waiting,) = waiting_runners()
    waiting.join(WAIT_S)
    assert not waiting.is_alive()
    assert not waiting_runners()
    _, name = run_and_wait()  # a thread started on demand serves the next call
    assert name == "tunecore-trial-probe"


@pytest.mark.usefixtures("own_pool")
def test_no_more_threads_wait_than_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runners, "IDLE_KEPT", 1)
    release = threading.Event()
    threads: list[threading.Thread] = []

    def block() -> None:
        threads.append(threading.current_thread())
        release.wait(WAIT_S)

    both = [runners.start(block, name=f"tunecore-trial-{i}") for i in range(2)]
    release.set()
    assert all(run.finished.wait(WAIT_S) for run in both)
    for thread in threads:
        thread.join(WAIT_S)  # each ends after its run, starting at most one to wait
    assert len(runners._POOL._idle) == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_calls_in_threads_of_its_own() -> None:
    run_and_wait()  # the parent now has a thread waiting for the next call
    pid = os.fork()
    if pid == 0:  # the child: its copy of the parent's waiting runner has no thread
        ok = runners.start(lambda: None, name="tunecore-trial-child").finished.wait(WAIT_S)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
