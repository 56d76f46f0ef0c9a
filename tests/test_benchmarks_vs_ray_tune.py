"""The comparison's floor under ASHA: the fewest actor calls a run needs
is one per rung each trial reached, and one more for a trial that ran to
`max_t` (a STOP must land at the report it answers, so no framework can
skip the wait at a rung)."""

from __future__ import annotations

from benchmarks.vs_ray_tune import asha_round_trips


def test_a_trial_waits_at_every_rung_it_reaches_and_once_more_to_max_t() -> None:
    # grace 1, reduction 4, max_t 50: rungs at 1, 4 and 16
    assert asha_round_trips([1], 50) == 1
    assert asha_round_trips([4], 50) == 2
    assert asha_round_trips([16], 50) == 3
    assert asha_round_trips([50], 50) == 4
    assert asha_round_trips([1, 1, 4, 16, 50], 50) == 11


def test_a_max_t_on_a_rung_is_not_counted_as_a_rung() -> None:
    # max_t 16: rungs at 1 and 4; reaching 16 is the end, one call past the last rung
    assert asha_round_trips([16], 16) == 3
    assert asha_round_trips([], 16) == 0
