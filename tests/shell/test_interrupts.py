"""Ctrl-C is held back while the loop logs and applies an event."""

from __future__ import annotations

import signal

import pytest

from tunecore.shell.interrupts import InterruptGuard


def interrupt_inside_a_critical_section(guard: InterruptGuard, steps: list[str]) -> None:
    with guard.critical():
        signal.raise_signal(signal.SIGINT)
        steps.append("the section ran to its end")


def test_a_ctrl_c_inside_a_critical_section_lands_when_it_ends() -> None:
    guard = InterruptGuard()
    steps: list[str] = []
    with guard.installed(), pytest.raises(KeyboardInterrupt):
        interrupt_inside_a_critical_section(guard, steps)
    assert steps == ["the section ran to its end"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_outside_a_critical_section_lands_at_once() -> None:
    guard = InterruptGuard()
    with guard.installed(), pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)


def test_the_handler_installed_before_is_the_one_called() -> None:
    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        guard = InterruptGuard()
        with guard.installed(), guard.critical():
            signal.raise_signal(signal.SIGINT)
            assert seen == []
        assert seen == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)
