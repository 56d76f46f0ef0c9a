"""The threads that run training functions (`runners.py`)."""

from __future__ import annotations

import contextvars
import logging
import os
import threading

import pytest

from tunecore.shell.trainable import runners

WAIT_S = 10.0  # generous: each wait ends as soon as what it waits for happens

VISITED: contextvars.ContextVar[str] = contextvars.ContextVar("visited", default="")


def run_and_wait() -> tuple[threading.Thread, str]:
    """Start a call that records its thread and name; wait until it returns."""
    seen: list[tuple[threading.Thread, str]] = []

    def record() -> None:
        thread = threading.current_thread()
        seen.append((thread, thread.name))

    run = runners.start(record, name="tunecore-trial-probe")
    assert run.finished.wait(WAIT_S)
    return seen[0]


def test_a_call_runs_in_another_thread_named_while_it_runs() -> None:
    thread, name = run_and_wait()
    assert thread is not threading.current_thread()
    assert name == "tunecore-trial-probe"
    assert thread.name == runners.IDLE_NAME  # renamed before `finished` is set


def test_the_thread_of_a_finished_run_runs_the_next() -> None:
    first, _ = run_and_wait()
    second, _ = run_and_wait()
    assert second is first


def test_a_call_that_has_not_returned_keeps_its_thread() -> None:
    release = threading.Event()
    blocked_in: list[threading.Thread] = []

    def block() -> None:
        blocked_in.append(threading.current_thread())
        release.wait(WAIT_S)

    blocked = runners.start(block, name="tunecore-trial-blocked")
    try:
        other, _ = run_and_wait()
        assert not blocked.finished.is_set()
        assert other is not blocked_in[0]
    finally:
        release.set()
    assert blocked.finished.wait(WAIT_S)


def test_a_context_variable_set_by_one_run_is_not_seen_by_the_next() -> None:
    seen: list[str] = []

    def visit() -> None:
        seen.append(VISITED.get())
        VISITED.set("set by an earlier run")

    for _ in range(2):
        assert runners.start(visit, name="tunecore-trial-context").finished.wait(WAIT_S)
    assert seen == ["", ""]


def test_a_call_that_raises_is_logged_and_its_thread_serves_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failed_in: list[threading.Thread] = []

    def fail() -> None:
        failed_in.append(threading.current_thread())
        raise RuntimeError("boom in a runner")

    with caplog.at_level(logging.ERROR, logger=runners.__name__):
        assert runners.start(fail, name="tunecore-trial-fails").finished.wait(WAIT_S)
    assert "boom in a runner" in caplog.text
    thread, _ = run_and_wait()
    assert thread is failed_in[0]


def test_an_idle_thread_ends_after_its_idle_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runners, "IDLE_S", 0.01)
    thread, _ = run_and_wait()
    thread.join(WAIT_S)
    assert not thread.is_alive()
    fresh, _ = run_and_wait()  # a new thread serves the next run
    assert fresh is not thread


def test_no_more_idle_threads_are_kept_than_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runners, "IDLE_KEPT", 1)
    monkeypatch.setattr(runners, "_POOL", runners._Pool())
    release = threading.Event()
    threads: list[threading.Thread] = []

    def block() -> None:
        threads.append(threading.current_thread())
        release.wait(WAIT_S)

    both = [runners.start(block, name=f"tunecore-trial-{i}") for i in range(2)]
    release.set()
    assert all(run.finished.wait(WAIT_S) for run in both)
    kept, _ = run_and_wait()  # the one idle runner takes the next run
    assert kept in threads
    (other,) = [thread for thread in threads if thread is not kept]
    other.join(WAIT_S)
    assert not other.is_alive()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_calls_in_threads_of_its_own() -> None:
    run_and_wait()  # the parent now has an idle runner
    pid = os.fork()
    if pid == 0:  # the child: its copy of the parent's idle runner has no thread
        ok = runners.start(lambda: None, name="tunecore-trial-child").finished.wait(WAIT_S)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
