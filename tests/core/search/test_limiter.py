"""ConcurrencyLimiter: the bound, what is forwarded, batching, and a
state machine that never lets more than `max_concurrent` trials run."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.core.search.support import Completion, Recorder
from tunecore.core.search import (
    BasicVariantGenerator,
    ConcurrencyLimiter,
    Repeater,
    SearchPolicy,
    grid_search,
    uniform,
)
from tunecore.model import InvalidFieldError, Mode
from tunecore.model.codec import from_msgpack, to_msgpack


def test_it_is_a_searcher() -> None:
    limiter = ConcurrencyLimiter(Recorder(), max_concurrent=1)
    searcher: SearchPolicy = limiter
    assert not searcher.is_finished


def test_suggest_returns_none_while_the_bound_is_reached() -> None:
    limiter = ConcurrencyLimiter(Recorder(budget=5), max_concurrent=2)
    limiter, first = limiter.suggest("a")
    limiter, second = limiter.suggest("b")
    assert first is not None
    assert second is not None
    full, none = limiter.suggest("c")
    assert none is None
    assert full is limiter
    assert limiter.searcher.suggested == ("a", "b")
    limiter = limiter.on_trial_complete("a", {"loss": 1.0})
    assert limiter.live == ("b",)
    limiter, third = limiter.suggest("c")
    assert third is not None
    assert limiter.live == ("b", "c")


def test_only_live_trials_reach_the_wrapped_searcher() -> None:
    limiter, _ = ConcurrencyLimiter(Recorder(), max_concurrent=2).suggest("a")
    limiter = limiter.on_trial_result("a", {"loss": 2.0})
    limiter = limiter.on_trial_result("stranger", {"loss": 0.0})
    limiter = limiter.on_trial_complete("stranger", {"loss": 0.0})
    limiter = limiter.on_trial_complete("a", {"loss": 1.0}, error=True)
    limiter = limiter.on_trial_complete("a", {"loss": 1.0})
    assert limiter.searcher.results == (("a", {"loss": 2.0}),)
    assert limiter.searcher.completions == (Completion("a", {"loss": 1.0}, True),)


def test_a_none_from_the_wrapped_searcher_takes_no_place() -> None:
    limiter, _ = ConcurrencyLimiter(Recorder(budget=1), max_concurrent=3).suggest("a")
    limiter, none = limiter.suggest("b")
    assert none is None
    assert limiter.live == ("a",)
    assert limiter.is_finished


def test_batch_mode_hands_completions_over_together_once_all_have_completed() -> None:
    limiter = ConcurrencyLimiter(Recorder(budget=5), max_concurrent=2, batch=True)
    limiter, _ = limiter.suggest("a")
    limiter, _ = limiter.suggest("b")
    limiter = limiter.on_trial_complete("b", {"loss": 2.0})
    assert limiter.searcher.completions == ()
    assert limiter.suggest("c")[1] is None
    limiter = limiter.on_trial_result("b", {"loss": 9.0})
    assert limiter.searcher.results == ()
    limiter = limiter.on_trial_complete("a", None, error=True)
    assert limiter.searcher.completions == (
        Completion("b", {"loss": 2.0}, False),
        Completion("a", None, True),
    )
    assert limiter.live == ()
    assert limiter.held == ()
    assert limiter.suggest("c")[1] is not None


def test_batch_mode_releases_a_short_last_batch() -> None:
    limiter = ConcurrencyLimiter(Recorder(budget=1), max_concurrent=4, batch=True)
    limiter, _ = limiter.suggest("a")
    limiter = limiter.on_trial_complete("a", {"loss": 1.0})
    assert limiter.searcher.completions == (Completion("a", {"loss": 1.0}, False),)


def test_the_objective_is_passed_to_the_wrapped_searcher() -> None:
    limiter = ConcurrencyLimiter(Recorder(), max_concurrent=1).with_objective("loss", Mode.MIN)
    assert limiter.searcher.metric == "loss"
    assert limiter.searcher.mode is Mode.MIN


@pytest.mark.parametrize("bound", [0, -1])
def test_the_bound_must_be_positive(bound: int) -> None:
    with pytest.raises(InvalidFieldError, match="max_concurrent"):
        ConcurrencyLimiter(Recorder(), max_concurrent=bound)


def test_it_round_trips_when_parametrised_with_the_wrapped_type() -> None:
    space = {"a": grid_search([1, 2, 3]), "x": uniform(0, 1)}
    limiter = ConcurrencyLimiter(BasicVariantGenerator(space, seed=3), max_concurrent=2)
    limiter, _ = limiter.suggest("t0")
    decoded = from_msgpack(to_msgpack(limiter), ConcurrencyLimiter[BasicVariantGenerator])
    assert decoded == limiter
    nested = ConcurrencyLimiter(Repeater(BasicVariantGenerator(space), repeat=2), 3)
    nested, _ = nested.suggest("t0")
    kind = ConcurrencyLimiter[Repeater[BasicVariantGenerator]]
    assert from_msgpack(to_msgpack(nested), kind) == nested


class LimiterMachine(RuleBasedStateMachine):
    """Suggests and completes trials in random order against a limiter over
    a real generator; the model is the set of trials handed out and not
    completed."""

    limiter: ConcurrencyLimiter[BasicVariantGenerator]

    @initialize(bound=st.integers(1, 4), batch=st.booleans(), samples=st.integers(1, 6))
    def start(self, bound: int, batch: bool, samples: int) -> None:
        generator = BasicVariantGenerator(
            {"a": grid_search([1, 2]), "x": uniform(0, 1)}, num_samples=samples
        )
        self.limiter = ConcurrencyLimiter(generator, max_concurrent=bound, batch=batch)
        self.bound = bound
        self.batch = batch
        self.total = 2 * samples
        self.running: list[str] = []
        self.completed: set[str] = set()
        self.handed_out = 0

    @rule()
    def suggest(self) -> None:
        trial_id = f"t{self.handed_out}"
        self.limiter, suggestion = self.limiter.suggest(trial_id)
        if suggestion is None:
            assert len(self.limiter.live) >= self.bound or self.limiter.is_finished
        else:
            self.handed_out += 1
            self.running.append(trial_id)

    @precondition(lambda self: bool(self.running))
    @rule(data=st.data())
    def complete(self, data: st.DataObject) -> None:
        trial_id = data.draw(st.sampled_from(self.running))
        self.running.remove(trial_id)
        self.completed.add(trial_id)
        self.limiter = self.limiter.on_trial_complete(trial_id, {"loss": 1.0})

    @rule()
    def complete_a_stranger(self) -> None:
        before = self.limiter
        assert self.limiter.on_trial_complete("stranger", None) is before

    @invariant()
    def never_more_than_the_bound_run(self) -> None:
        assert len(self.running) <= self.bound
        assert len(self.limiter.live) <= self.bound

    @invariant()
    def live_is_what_runs_and_what_a_batch_still_holds(self) -> None:
        held = {h.trial_id for h in self.limiter.held}
        assert set(self.limiter.live) == set(self.running) | held
        if not self.batch:
            assert not held

    @invariant()
    def it_never_suggests_more_than_the_generator_has(self) -> None:
        assert self.handed_out <= self.total
        assert self.limiter.is_finished == (self.handed_out == self.total)

    @invariant()
    def it_round_trips(self) -> None:
        kind = ConcurrencyLimiter[BasicVariantGenerator]
        assert from_msgpack(to_msgpack(self.limiter), kind) == self.limiter


LimiterMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestLimiter = LimiterMachine.TestCase


def test_a_paused_trial_counts_unless_the_searcher_bounds_its_own_concurrency() -> None:
    """Ray's default: every live trial counts. For a searcher that takes the
    bound over and leaves paused trials out (TuneBOHB), so does the limiter."""
    for count_paused, frees_a_slot in ((True, False), (False, True)):
        limiter = ConcurrencyLimiter(
            Recorder(budget=5), max_concurrent=1, count_paused=count_paused
        )
        limiter, _ = limiter.suggest("a")
        limiter = limiter.on_trial_pause("a")
        limiter, third = limiter.suggest("b")
        assert (third is not None) is frees_a_slot
    limiter = ConcurrencyLimiter(Recorder(budget=5), max_concurrent=1, count_paused=False)
    limiter, _ = limiter.suggest("a")
    limiter, _ = limiter.on_trial_pause("a").suggest("b")
    assert limiter.paused == ("a",)
    limiter = limiter.on_trial_unpause("a")
    assert limiter.paused == ()
    assert limiter.suggest("c")[1] is None  # a and b both run: over the bound until one ends
    limiter = limiter.on_trial_pause("b").on_trial_complete("b", None)
    assert limiter.paused == ()
    assert limiter.live == ("a",)


def test_a_limiter_that_counts_paused_trials_encodes_as_before() -> None:
    limiter = ConcurrencyLimiter(Recorder(budget=5), max_concurrent=1)
    limiter, _ = limiter.suggest("a")
    paused = limiter.on_trial_pause("a")
    assert to_msgpack(paused) == to_msgpack(limiter)
    assert b"paused_ids" not in to_msgpack(paused)
    assert b"count_paused" not in to_msgpack(paused)


def test_save_and_restore_are_the_wrapped_searchers_and_a_built_in_one_has_none() -> None:
    """Ray's ConcurrencyLimiter passes save/restore on to the searcher it
    wraps; tunecore's built-in searchers keep their state in the event log,
    and the error says so."""
    calls: list[tuple[str, str]] = []

    class Own:
        def save(self, path: str) -> None:
            calls.append(("save", path))

        def restore(self, path: str) -> None:
            calls.append(("restore", path))

    limiter = ConcurrencyLimiter(Own(), max_concurrent=1)  # type: ignore[type-var]
    limiter.save("a.pkl")
    limiter.restore("a.pkl")
    assert calls == [("save", "a.pkl"), ("restore", "a.pkl")]
    built_in = ConcurrencyLimiter(BasicVariantGenerator({"x": uniform(0, 1)}), max_concurrent=1)
    with pytest.raises(
        AttributeError, match=r"BasicVariantGenerator has no save\(\).*Tuner\.restore"
    ):
        built_in.save("a.pkl")
