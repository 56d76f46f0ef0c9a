"""The Ray executor's placement patience follows the run's own actor starts
(`shell.executors.patience`), in virtual time: the clock is an argument."""

from __future__ import annotations

from tunecore.shell.executors.patience import (
    PLACEMENT_PATIENCE_MAX_S,
    PLACEMENT_PATIENCE_S,
    RECENT_PLACEMENTS,
    PlacementPatience,
)


def placed_after(patience: PlacementPatience, trial_id: str, start: float, seconds: float) -> None:
    patience.created(trial_id, start)
    patience.placed(trial_id, start + seconds)


def test_before_any_start_an_actor_waits_the_floor() -> None:
    patience = PlacementPatience()
    patience.created("a", 0.0)
    assert "a" in patience
    assert patience.overdue(PLACEMENT_PATIENCE_S) == set()
    assert patience.overdue(PLACEMENT_PATIENCE_S + 0.1) == {"a"}


def test_slow_starts_lengthen_the_patience() -> None:
    """On a loaded machine an actor takes 8 s to start: the next one, as
    slow, is not taken for starved at 5 s (which would end the idle
    actors, issue of actor reuse collapsing under load)."""
    patience = PlacementPatience()
    placed_after(patience, "a", 0.0, 8.0)
    assert "a" not in patience
    assert patience.seconds() == 16.0
    patience.created("b", 10.0)
    assert patience.overdue(10.0 + 9.0) == set()
    assert patience.overdue(10.0 + 16.1) == {"b"}


def test_fast_starts_keep_the_floor() -> None:
    patience = PlacementPatience()
    placed_after(patience, "a", 0.0, 0.4)
    assert patience.seconds() == PLACEMENT_PATIENCE_S


def test_the_patience_is_bounded_so_a_starved_actor_is_always_rescued() -> None:
    patience = PlacementPatience()
    placed_after(patience, "a", 0.0, 500.0)
    assert patience.seconds() == PLACEMENT_PATIENCE_MAX_S
    patience.created("b", 600.0)
    assert patience.overdue(600.0 + PLACEMENT_PATIENCE_MAX_S + 0.1) == {"b"}


def test_a_slow_start_ages_out_after_the_recent_placements() -> None:
    patience = PlacementPatience()
    placed_after(patience, "slow", 0.0, 20.0)
    for i in range(RECENT_PLACEMENTS - 1):
        placed_after(patience, f"fast{i}", 100.0 + i, 1.0)
    assert patience.seconds() == 40.0
    placed_after(patience, "last", 200.0, 1.0)
    assert patience.seconds() == PLACEMENT_PATIENCE_S


def test_a_rescued_actor_counts_only_its_start_after_the_rescue() -> None:
    """The actor waited 5 s for an idle actor's CPU, which the executor
    then ended; it was up 1 s later. Counting the 6 s would double the
    next patience, and every rescue would double it again."""
    patience = PlacementPatience()
    patience.created("b", 0.0)
    assert patience.overdue(5.1) == {"b"}
    patience.freed(5.1)
    patience.placed("b", 6.1)
    assert patience.seconds() == PLACEMENT_PATIENCE_S


def test_a_trial_that_left_its_actor_unplaced_is_no_sample() -> None:
    patience = PlacementPatience()
    patience.created("a", 0.0)
    patience.forget("a")
    patience.placed("a", 30.0)  # a late reply changes nothing
    assert "a" not in patience
    assert patience.seconds() == PLACEMENT_PATIENCE_S
    assert patience.overdue(100.0) == set()
