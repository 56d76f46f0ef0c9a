"""A `Relay`: results of outside work the function waits on (a Ray Train
run, in tunecore.integration.ray_train), forwarded to the trial from a
thread of the relay's own. Here the outside work is a queue the test feeds,
and the function waits for the test to end it, as it waits in `fit()`."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

import pytest

from tests.shell.trainable.conftest import MakeFunction
from tunecore.model import JsonDict
from tunecore.shell.trainable import RESULT_DUPLICATE, TrainableError, report
from tunecore.shell.trainable.session import TrialSession, current_session


class OutsideWork:
    """Results put on `results` are forwarded by a thread of the relay's
    own; `ended` is the outside work ending (the function's `fit()`
    returning), `aborted` what `on_stop` does to it."""

    def __init__(self, session: TrialSession, close_error: Exception | None = None) -> None:
        self.results: queue.Queue[JsonDict | None] = queue.Queue()
        self.ended = threading.Event()
        self.aborted = False
        self._session = session
        self._close_error = close_error
        self._thread = threading.Thread(target=self._forward, name="outside-work")
        self._thread.start()

    def _forward(self) -> None:
        while (result := self.results.get()) is not None:
            if not self._session.forward(result):
                return

    def on_stop(self) -> bool:
        self.aborted = True
        self.results.put(None)
        self.ended.set()
        return True

    def close(self) -> None:
        self.results.put(None)
        self._thread.join()
        if self._close_error is not None:
            raise self._close_error


class Works:
    """The `OutsideWork`s functions attached, and an event set at each."""

    def __init__(self) -> None:
        self.attached: list[OutsideWork] = []
        self.event = threading.Event()

    def first(self) -> OutsideWork:
        """The first one, once the function attached it."""
        assert self.event.wait(timeout=60)
        return self.attached[0]


def waiting_for_outside_work(
    works: Works, then: Callable[[], None] = lambda: None, **relay: Exception
) -> Callable[[JsonDict], None]:
    """A function that attaches an `OutsideWork` (to `works`), waits for it
    to end, raises if it was aborted, then calls `then`."""

    def fn(config: JsonDict) -> None:
        session = current_session()
        assert session is not None
        work = session.relay("outside", lambda: OutsideWork(session, **relay))
        assert isinstance(work, OutsideWork)
        works.attached.append(work)
        works.event.set()
        work.ended.wait()
        if work.aborted:
            raise RuntimeError("the outside work was aborted")
        then()

    return fn


def test_forwarded_results_reach_the_trial_in_order_all_of_them_before_the_end(
    make_function: MakeFunction,
) -> None:
    works = Works()
    trainable = make_function(waiting_for_outside_work(works))
    assert trainable.train_within(0) is None  # started; nothing reported yet
    work = works.first()
    for step in (1, 2, 3):
        work.results.put({"step": step})
    work.ended.set()  # the function returns with three results still to hand over

    steps = [trainable.train()["step"] for _ in range(3)]
    assert steps == [1, 2, 3]
    assert trainable.train()[RESULT_DUPLICATE] is True  # the end, after them


def test_the_functions_own_reports_take_turns_with_the_relays(make_function: MakeFunction) -> None:
    works = Works()
    trainable = make_function(waiting_for_outside_work(works, then=lambda: report({"own": 1})))
    assert trainable.train_within(0) is None
    work = works.first()
    work.results.put({"step": 1})
    assert trainable.train()["step"] == 1
    work.ended.set()  # the function reports while the relay waits in its report

    assert trainable.train()["own"] == 1
    assert trainable.train()[RESULT_DUPLICATE] is True


def test_a_stop_ends_the_outside_work_and_its_error_is_expected(
    make_function: MakeFunction, caplog: pytest.LogCaptureFixture
) -> None:
    works = Works()
    trainable = make_function(waiting_for_outside_work(works))
    assert trainable.train_within(0) is None  # started; nothing reported yet
    work = works.first()
    work.results.put({"step": 1})
    assert trainable.train()["step"] == 1

    with caplog.at_level(logging.WARNING):
        trainable.stop()  # the relay's report unwinds; the function raises as its work ends

    assert work.aborted
    assert not [r for r in caplog.records if "raised while stopping" in r.getMessage()]


def test_a_relay_that_cannot_hand_over_fails_the_trial(make_function: MakeFunction) -> None:
    works = Works()
    failing = waiting_for_outside_work(works, close_error=ValueError("a result it cannot take"))
    trainable = make_function(failing)
    assert trainable.train_within(0) is None
    works.first().ended.set()

    with pytest.raises(TrainableError, match="a result it cannot take"):
        trainable.train()


def test_a_run_keeps_one_relay_of_a_kind(make_function: MakeFunction) -> None:
    attached: list[object] = []

    def fn(config: JsonDict) -> None:
        session = current_session()
        assert session is not None
        for _ in range(2):
            attached.append(session.relay("outside", lambda: OutsideWork(session)))
        work = attached[0]
        assert isinstance(work, OutsideWork)
        work.ended.set()

    make_function(fn).train()
    assert attached[0] is attached[1]
