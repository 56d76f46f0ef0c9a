"""`SearcherRuntime`: what the searcher object in the shell is told, and
what it answers to the core's `AskSearcher` commands."""

from __future__ import annotations

from typing import Any

import pytest

from tunecore.core.experiment import ExperimentState, new_experiment, step
from tunecore.core.experiment.state import ExperimentConfig
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.search.external import ExternalSearcher, Tell, TellKind
from tunecore.model import (
    Asked,
    AskSearcher,
    ClusterResourcesChanged,
    Command,
    ExperimentEvent,
    Rejection,
    Resources,
    StopRequested,
    TrialRequested,
)
from tunecore.shell.searchers import SearcherRuntime, SearchResumeWarning


class Recorder:
    """Records every call; suggests x = 1, 2, 3, ..."""

    metric = "score"

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def suggest(self, trial_id: str) -> dict[str, Any]:
        self.calls.append(("suggest", trial_id))
        return {"x": len([c for c in self.calls if c[0] == "suggest"])}

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        self.calls.append(("result", trial_id))

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        self.calls.append(("complete", trial_id, error))

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        self.calls.append(("added", parameters, value, error))


class Driven:
    """The core stepped by hand, its `AskSearcher` commands carried out by
    `runtime` as the loop does: each answer is stepped next."""

    def __init__(self, runtime: SearcherRuntime, state: ExperimentState, *, early: bool) -> None:
        self.runtime = runtime
        self.state = state
        self.early = early
        """Tell what each step records at once (`tell_new`), as the loop
        does; else only at the next ask."""
        self.asks: list[AskSearcher] = []

    def advance(self, event: ExperimentEvent) -> None:
        outcome = step(self.state, event)
        assert not isinstance(outcome, Rejection), outcome
        self.state, commands = outcome
        failed = self.runtime.tell_new(self.state, 2.0) if self.early else None
        self._answer(commands)
        if failed is not None:
            self.advance(failed)

    def _answer(self, commands: tuple[Command, ...]) -> None:
        for command in commands:
            if isinstance(command, AskSearcher):
                self.asks.append(command)
                answer = self.runtime.ask(self.state, command, 2.0)
                if answer is None:
                    assert self.runtime.failure is not None  # it failed in a tell
                    continue
                self.advance(answer)


def started(runtime: SearcherRuntime, *, early: bool = False) -> Driven:
    config = ExperimentConfig(trainable_name="t", trial_id_prefix="p", max_pending_trials=1)
    state = new_experiment(config, FIFOScheduler(), ExternalSearcher(name="tests:Recorder"))
    driven = Driven(runtime, state, early=early)
    driven.advance(ClusterResourcesChanged(at=1.0, total=Resources(cpu=1)))
    return driven


def test_it_answers_each_ask_once_and_the_trial_gets_the_config() -> None:
    recorder = Recorder()
    runtime = SearcherRuntime(recorder)
    driven = started(runtime)
    # One trial runs (1 CPU), one waits (max_pending_trials=1): two asks.
    assert recorder.calls == [("suggest", "p_00000"), ("suggest", "p_00001")]
    assert driven.state.trials["p_00001"].spec.config == {"x": 2}
    assert runtime.ask(driven.state, driven.asks[-1], 3.0) is None  # asked: not again
    assert len(recorder.calls) == 2


@pytest.mark.parametrize("early", [False, True], ids=["told-at-the-ask", "told-at-once"])
def test_a_trial_from_outside_is_told_as_a_point_evaluated_elsewhere(early: bool) -> None:
    """The same calls in the same order, whether what a step records is
    told at once (as the loop does) or at the next ask (as a rebuild does)."""
    recorder = Recorder()
    driven = started(SearcherRuntime(recorder), early=early)
    driven.advance(TrialRequested(at=3.0, config={"x": 7}))
    driven.advance(StopRequested(at=4.0, trial_id="p_00002"))
    driven.advance(StopRequested(at=5.0, trial_id="p_00000"))
    assert recorder.calls[2:] == [
        ("added", {"x": 7}, None, True),
        ("complete", "p_00000", False),
        ("suggest", "p_00003"),
    ]


def test_finish_tells_what_is_still_untold() -> None:
    recorder = Recorder()
    runtime = SearcherRuntime(recorder)
    driven = started(runtime)
    outcome = step(driven.state, StopRequested(at=4.0, trial_id="p_00000"))
    assert not isinstance(outcome, Rejection)
    runtime.finish(outcome[0])  # the experiment ended before the next ask
    assert recorder.calls[2:] == [("complete", "p_00000", False)]


def test_what_a_step_records_is_told_at_once_and_not_again() -> None:
    recorder = Recorder()
    runtime = SearcherRuntime(recorder)
    driven = started(runtime, early=True)
    outcome = step(driven.state, StopRequested(at=4.0, trial_id="p_00000"))
    assert not isinstance(outcome, Rejection)
    # The stop asks for a new trial, whose ask comes after the tell.
    assert [type(c) for c in outcome[1]].count(AskSearcher) == 1
    assert runtime.tell_new(outcome[0], 4.0) is None
    assert recorder.calls[2:] == [("complete", "p_00000", False)]
    assert runtime.tell_new(outcome[0], 4.5) is None
    runtime.finish(outcome[0])
    assert recorder.calls[2:] == [("complete", "p_00000", False)]
    ask = next(c for c in outcome[1] if isinstance(c, AskSearcher))
    assert isinstance(runtime.ask(outcome[0], ask, 5.0), Asked)
    assert recorder.calls[2:] == [("complete", "p_00000", False), ("suggest", ask.trial_id)]


class BreaksWhenTold(Recorder):
    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        super().on_trial_complete(trial_id, result, error)
        raise RuntimeError(f"cannot take {trial_id}")


def test_a_tell_that_raises_fails_the_search_then_and_the_object_hears_no_more() -> None:
    recorder = BreaksWhenTold()
    runtime = SearcherRuntime(recorder)
    driven = started(runtime, early=True)
    driven.advance(StopRequested(at=4.0, trial_id="p_00000"))
    assert runtime.failure == "RuntimeError: cannot take p_00000"
    assert driven.state.done
    assert driven.state.error == "The searcher failed: RuntimeError: cannot take p_00000"
    # The waiting trial is left to a restore (as at Ctrl-C), not ended.
    assert not driven.state.trials["p_00001"].is_finished
    runtime.finish(driven.state)
    assert recorder.calls[2:] == [("complete", "p_00000", False)]


class TakesNoPoints(Recorder):
    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        raise NotImplementedError


def test_a_divergent_rebuild_is_named_even_after_the_points_warning() -> None:
    warm = Tell("elsewhere", TellKind.ADDED, {"score": 1.0}, {"x": 3})
    config = ExperimentConfig(trainable_name="t", trial_id_prefix="p")
    searcher = ExternalSearcher(name="tests:TakesNoPoints", prelude=(warm,))
    outcome = step(
        new_experiment(config, FIFOScheduler(), searcher),
        ClusterResourcesChanged(at=1.0, total=Resources(cpu=1)),
    )
    assert not isinstance(outcome, Rejection)
    before = outcome[0]
    logged = Asked(at=2.0, key=0, trial_id="p_00000", config={"x": 99})
    runtime = SearcherRuntime(TakesNoPoints())
    with pytest.warns(SearchResumeWarning, match="x=1 where the log has x=99"):
        assert runtime.replay_ask(before, logged) == {"x": 1}
