"""A searcher object that suggests no trial while nothing runs is asked
again (`core.search.declines`), as Ray's TuneController does.

The core is driven here as the shell drives it: every `AskSearcher` is
answered from a script (a config, None, or FINISHED once the script is used
up), a started trial ends a few polls later, and a poll without an event
gives the `Tick` that `tick_to_log` says to log. Over random scripts, around
the searcher alone, in a `ConcurrencyLimiter` and in a `Repeater`: the
run ends (liveness); every config the script holds becomes a trial when no
run of None is as long as `GIVE_UP_AFTER`, and the run ends with no error;
a searcher that always answers None is given up with the dead end's
error; every logged Tick is one that made an ask; and the logged events
replay to the same states and commands.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Literal

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.experiment.test_step import config
from tunecore.core.experiment import ExperimentState, new_experiment, step
from tunecore.core.experiment.idle import tick_to_log
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.search import ConcurrencyLimiter, Repeater, SearchPolicy
from tunecore.core.search.base import declining_by
from tunecore.core.search.declines import GIVE_UP_AFTER, next_ask_at
from tunecore.core.search.external import ExternalSearcher
from tunecore.model import (
    Asked,
    AskSearcher,
    ClusterResourcesChanged,
    Command,
    ExperimentEvent,
    ExperimentResumed,
    JsonDict,
    Rejection,
    Resources,
    ResultReported,
    StartTrial,
    Tick,
)

Answer = Literal["x", "none"]
Wrapper = Literal["alone", "limiter", "repeater"]

POLLS = 5_000
"""More polls than any run below needs: 25 asks take about 612."""


def searcher_in(wrapper: Wrapper, *, asks_again: bool = True) -> SearchPolicy:
    inner = ExternalSearcher(name="tests:Scripted", asks_again=asks_again)
    if wrapper == "limiter":
        return ConcurrencyLimiter(inner, max_concurrent=1)
    if wrapper == "repeater":
        return Repeater(inner, repeat=2, metric="score")
    return inner


@dataclass
class Shell:
    """The shell's part, by hand: answers asks from `script`, ends each
    trial `lasts` polls after it starts, logs what it feeds."""

    state: ExperimentState
    script: list[Answer]
    lasts: int
    now: float = 100.0
    log: list[ExperimentEvent] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    answers: list[Asked] = field(default_factory=list)
    ends: dict[str, float] = field(default_factory=dict)
    made: int = 0

    def feed(self, event: ExperimentEvent) -> None:
        self.log.append(event)
        outcome = step(self.state, event)
        assert not isinstance(outcome, Rejection), outcome
        self.state, commands = outcome
        self.commands.extend(commands)
        for command in commands:
            if isinstance(command, StartTrial):
                self.ends[command.trial_id] = self.now + self.lasts
            elif isinstance(command, AskSearcher):
                self.answers.append(self._answer(command))

    def _answer(self, ask: AskSearcher) -> Asked:
        base = Asked(at=self.now, key=ask.key, trial_id=ask.trial_id, told=ask.told)
        if not self.script:
            return msgspec.structs.replace(base, finished=True)
        if self.script.pop(0) == "none":
            return base
        self.made += 1
        return msgspec.structs.replace(base, config={"x": float(self.made)})

    def run(self) -> int:
        """Drive the experiment until it is done; the polls it took."""
        self.feed(ClusterResourcesChanged(at=self.now, total=Resources(cpu=2)))
        for poll in range(POLLS):
            if self.state.done:
                return poll
            if self.answers:
                self.feed(self.answers.pop(0))
                continue
            self.now += 1.0  # the loop's poll: nothing came in it
            due = [t for t, at in self.ends.items() if at <= self.now]
            for trial_id in due:
                del self.ends[trial_id]
                result: JsonDict = {"score": 1.0, "done": True}
                self.feed(ResultReported(trial_id=trial_id, at=self.now, result=result))
            if not due and (tick := tick_to_log(self.state, self.now)) is not None:
                self.feed(tick)
        raise AssertionError(f"not done after {POLLS} polls")


def replayed(shell: Shell, first: ExperimentState) -> tuple[ExperimentState, list[Command]]:
    state, commands = first, list[Command]()
    for event in shell.log:
        outcome = step(state, event)
        assert not isinstance(outcome, Rejection), outcome
        state, made = outcome
        commands.extend(made)
    return state, commands


def longest_none_run(script: list[Answer]) -> int:
    longest = run = 0
    for answer in script:
        run = run + 1 if answer == "none" else 0
        longest = max(longest, run)
    return longest


scripts = st.lists(
    st.one_of(st.just("x"), st.lists(st.just("none"), min_size=1, max_size=30).map(tuple)),
    max_size=6,
).map(lambda parts: [a for part in parts for a in ((part,) if part == "x" else part)])


@settings(max_examples=60, deadline=None)
@given(
    script=scripts,
    wrapper=st.sampled_from(["alone", "limiter", "repeater"]),
    lasts=st.integers(0, 3),
)
def test_a_declining_searcher_is_asked_until_it_suggests_or_finishes(
    script: list[Answer], wrapper: Wrapper, lasts: int
) -> None:
    first = new_experiment(config(), FIFOScheduler(), searcher_in(wrapper))
    shell = Shell(first, list(script), lasts)
    shell.run()  # liveness: it ends
    configs = script.count("x")
    trials = shell.state.trials.values()
    if longest_none_run(script) < GIVE_UP_AFTER:
        assert shell.state.error is None
        assert len(trials) == configs * (2 if wrapper == "repeater" else 1)
        assert {t.spec.config["x"] for t in trials} == {float(n + 1) for n in range(configs)}
    elif shell.state.error is not None:
        assert f"asked {GIVE_UP_AFTER} times in a row" in shell.state.error
    ticks = sum(isinstance(e, Tick) for e in shell.log)
    assert ticks <= sum(isinstance(e, Asked) for e in shell.log)  # each made an ask
    state, commands = replayed(shell, first)
    assert state == shell.state
    assert commands == shell.commands


def test_a_searcher_that_always_declines_is_asked_on_the_schedule_then_given_up() -> None:
    first = new_experiment(config(), FIFOScheduler(), searcher_in("alone"))
    shell = Shell(first, ["none"] * 100, lasts=1)
    shell.run()
    asks = [e for e in shell.log if isinstance(e, Asked)]
    assert len(asks) == GIVE_UP_AFTER
    gaps = [b.at - a.at for a, b in itertools.pairwise(asks)]
    assert gaps == [next_ask_at(n, 0.0) for n in range(1, GIVE_UP_AFTER)]
    assert gaps[:10] == [1.0] * 10  # Ray's pace first
    assert shell.state.done
    assert shell.state.error == (
        "The searcher suggested no trial while none is running or waiting "
        f"(asked {GIVE_UP_AFTER} times in a row over 612 s), so the experiment cannot go on."
    )
    assert len(shell.log) == 2 * GIVE_UP_AFTER  # the cluster, 25 asks, 24 Ticks that made one


def test_a_log_from_before_keeps_its_dead_end() -> None:
    """An `ExternalSearcher` of a log written before searchers were asked
    again (`asks_again` False) ends the run at its first None, as it did."""
    shell = Shell(
        new_experiment(config(), FIFOScheduler(), searcher_in("alone", asks_again=False)),
        ["none", "x"],
        1,
    )
    shell.run()
    assert [type(e).__name__ for e in shell.log] == ["ClusterResourcesChanged", "Asked"]
    assert shell.state.error is not None
    assert "(asked" not in shell.state.error


def test_a_resume_asks_a_searcher_that_was_given_up_again() -> None:
    first = new_experiment(config(), FIFOScheduler(), searcher_in("alone"))
    nones: list[Answer] = ["none"] * GIVE_UP_AFTER
    script: list[Answer] = [*nones, "x"]
    shell = Shell(first, script, lasts=1)
    shell.run()
    assert shell.state.error is not None
    assert declining_by(shell.state.searcher) is not None
    shell.now += 60.0
    shell.feed(ExperimentResumed(at=shell.now))
    assert declining_by(shell.state.searcher) is None  # its count starts again
    shell.run()
    resumed = shell.state
    assert resumed.error is None
    assert [t.spec.config for t in resumed.trials.values()] == [{"x": 1.0}]
