"""When to checkpoint, what to restore from, and which checkpoints to keep.

Retention cases are worked out by hand: after each save the kept set is the
best `num_to_keep` persistent checkpoints by score (ties to the newer), plus
the newest one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tunecore.core import current_checkpoint, should_checkpoint
from tunecore.core.checkpoints import (
    checkpoint_dirname,
    dirname_generation,
    generation_dirname,
    record_checkpoint,
)
from tunecore.model import (
    CheckpointHistory,
    CheckpointPolicy,
    CheckpointRef,
    CheckpointStorage,
    Mode,
    TrialSpec,
    TrialState,
    TrialStatus,
)

PERSISTENT = CheckpointStorage.PERSISTENT
MEMORY = CheckpointStorage.MEMORY


def persistent(path: str, **metrics: Any) -> CheckpointRef:
    return CheckpointRef(storage=PERSISTENT, path=path, metrics=metrics)


def memory(path: str) -> CheckpointRef:
    return CheckpointRef(storage=MEMORY, path=path)


def save_all(
    policy: CheckpointPolicy, checkpoints: Iterable[CheckpointRef]
) -> list[tuple[CheckpointHistory, tuple[CheckpointRef, ...]]]:
    """Record each checkpoint in turn; return the history and drops after each."""
    history = CheckpointHistory()
    steps = []
    for checkpoint in checkpoints:
        history, dropped = record_checkpoint(history, checkpoint, policy)
        steps.append((history, dropped))
    return steps


# --- should_checkpoint -------------------------------------------------------


@pytest.mark.parametrize(
    ("iteration", "expected"),
    [(1, False), (2, False), (3, True), (4, False), (6, True), (7, False)],
)
def test_checkpoint_every_frequency_iterations(iteration: int, expected: bool) -> None:
    policy = CheckpointPolicy(frequency=3)
    assert should_checkpoint(policy, {"training_iteration": iteration}) is expected


@pytest.mark.parametrize("iteration", [1, 2, 3, 10, 100])
def test_frequency_zero_never_checkpoints_by_count(iteration: int) -> None:
    policy = CheckpointPolicy(frequency=0)
    assert should_checkpoint(policy, {"training_iteration": iteration, "done": False}) is False


def test_at_end_checkpoints_only_when_done() -> None:
    policy = CheckpointPolicy(at_end=True)
    assert should_checkpoint(policy, {"training_iteration": 5, "done": True}) is True
    assert should_checkpoint(policy, {"training_iteration": 5, "done": False}) is False
    assert should_checkpoint(policy, {"training_iteration": 5}) is False


def test_done_without_at_end_does_not_checkpoint() -> None:
    policy = CheckpointPolicy(at_end=False, frequency=0)
    assert should_checkpoint(policy, {"training_iteration": 5, "done": True}) is False


def test_done_without_at_end_still_checkpoints_on_the_frequency() -> None:
    policy = CheckpointPolicy(at_end=False, frequency=5)
    assert should_checkpoint(policy, {"training_iteration": 5, "done": True}) is True


def test_the_trainables_should_checkpoint_flag_forces_a_checkpoint() -> None:
    policy = CheckpointPolicy(frequency=0)
    assert should_checkpoint(policy, {"training_iteration": 1, "should_checkpoint": True}) is True
    assert should_checkpoint(policy, {"training_iteration": 1, "should_checkpoint": False}) is False


def test_a_non_numeric_iteration_is_not_due_by_count() -> None:
    policy = CheckpointPolicy(frequency=2)
    assert should_checkpoint(policy, {"training_iteration": "2"}) is False


# --- current_checkpoint ------------------------------------------------------


def trial_with(
    history: CheckpointHistory,
    status: TrialStatus = TrialStatus.PENDING,
    restore_path: str | None = None,
) -> TrialState:
    spec = TrialSpec(trial_id="t1", trainable_name="train_fn", restore_path=restore_path)
    return TrialState(spec=spec, status=status, checkpoints=history)


P1 = persistent("/ckpt/1")
P2 = persistent("/ckpt/2")
M1 = memory("obj-1")


def test_no_checkpoint_and_no_restore_path_is_none() -> None:
    assert current_checkpoint(trial_with(CheckpointHistory())) is None


def test_the_newest_persistent_checkpoint_when_it_arrived_last() -> None:
    history = CheckpointHistory(persistent=(P1, P2), memory=M1, memory_is_newest=False)
    assert current_checkpoint(trial_with(history)) == P2


def test_the_memory_checkpoint_when_it_arrived_last() -> None:
    history = CheckpointHistory(persistent=(P1, P2), memory=M1, memory_is_newest=True)
    assert current_checkpoint(trial_with(history, TrialStatus.PAUSED)) == M1


def test_a_trial_in_error_uses_the_newest_persistent_checkpoint() -> None:
    history = CheckpointHistory(persistent=(P1, P2), memory=M1, memory_is_newest=True)
    assert current_checkpoint(trial_with(history, TrialStatus.ERROR)) == P2


def test_a_trial_in_error_with_only_memory_falls_back_to_the_restore_path() -> None:
    history = CheckpointHistory(memory=M1, memory_is_newest=True)
    trial = trial_with(history, TrialStatus.ERROR, restore_path="/restore/here")
    assert current_checkpoint(trial) == CheckpointRef(storage=PERSISTENT, path="/restore/here")


def test_the_restore_path_when_there_is_no_checkpoint() -> None:
    trial = trial_with(CheckpointHistory(), restore_path="/restore/here")
    assert current_checkpoint(trial) == CheckpointRef(storage=PERSISTENT, path="/restore/here")


def test_a_checkpoint_wins_over_the_restore_path() -> None:
    trial = trial_with(CheckpointHistory(persistent=(P1,)), restore_path="/restore/here")
    assert current_checkpoint(trial) == P1


# --- record_checkpoint: retention --------------------------------------------


def test_without_num_to_keep_every_persistent_checkpoint_is_kept() -> None:
    checkpoints = [persistent(f"/c{i}", score=float(i)) for i in range(5)]
    steps = save_all(CheckpointPolicy(score_attribute="score"), checkpoints)
    assert steps[-1][0] == CheckpointHistory(persistent=tuple(checkpoints))
    assert all(dropped == () for _, dropped in steps)


def test_keep_one_by_max_score() -> None:
    policy = CheckpointPolicy(num_to_keep=1, score_attribute="score", score_order=Mode.MAX)
    c1, c2, c3, c4 = (
        persistent("/c1", score=5.0),
        persistent("/c2", score=3.0),
        persistent("/c3", score=4.0),
        persistent("/c4", score=6.0),
    )
    steps = save_all(policy, [c1, c2, c3, c4])
    # c2 is worse than c1 but is the newest: kept.
    assert steps[1] == (CheckpointHistory(persistent=(c1, c2)), ())
    # c3 arrives: c2 is neither best nor newest any more.
    assert steps[2] == (CheckpointHistory(persistent=(c1, c3)), (c2,))
    # c4 is both the best and the newest.
    assert steps[3] == (CheckpointHistory(persistent=(c4,)), (c1, c3))


def test_keep_two_by_min_score() -> None:
    policy = CheckpointPolicy(num_to_keep=2, score_attribute="loss", score_order=Mode.MIN)
    c1, c2, c3, c4, c5 = (
        persistent("/c1", loss=0.5),
        persistent("/c2", loss=0.3),
        persistent("/c3", loss=0.4),
        persistent("/c4", loss=0.9),
        persistent("/c5", loss=0.35),
    )
    steps = save_all(policy, [c1, c2, c3, c4, c5])
    assert steps[1] == (CheckpointHistory(persistent=(c1, c2)), ())
    assert steps[2] == (CheckpointHistory(persistent=(c2, c3)), (c1,))
    # c4 is the worst, kept only as the newest.
    assert steps[3] == (CheckpointHistory(persistent=(c2, c3, c4)), ())
    # best two are now c2 (0.3) and c5 (0.35); c3 falls out, c4 is no longer newest.
    assert steps[4] == (CheckpointHistory(persistent=(c2, c5)), (c3, c4))


def test_keep_two_by_max_score() -> None:
    policy = CheckpointPolicy(num_to_keep=2, score_attribute="score")
    c1, c2, c3, c4 = (
        persistent("/c1", score=1.0),
        persistent("/c2", score=9.0),
        persistent("/c3", score=5.0),
        persistent("/c4", score=7.0),
    )
    steps = save_all(policy, [c1, c2, c3, c4])
    assert steps[2] == (CheckpointHistory(persistent=(c2, c3)), (c1,))
    assert steps[3] == (CheckpointHistory(persistent=(c2, c4)), (c3,))


def test_ties_go_to_the_newer_checkpoint() -> None:
    policy = CheckpointPolicy(num_to_keep=1, score_attribute="score")
    c1, c2 = persistent("/c1", score=5.0), persistent("/c2", score=5.0)
    steps = save_all(policy, [c1, c2])
    assert steps[1] == (CheckpointHistory(persistent=(c2,)), (c1,))


def test_a_tie_with_an_older_best_goes_to_the_newest() -> None:
    policy = CheckpointPolicy(num_to_keep=1, score_attribute="score")
    c1, c2, c3 = (
        persistent("/c1", score=5.0),
        persistent("/c2", score=1.0),
        persistent("/c3", score=5.0),
    )
    steps = save_all(policy, [c1, c2, c3])
    assert steps[1] == (CheckpointHistory(persistent=(c1, c2)), ())
    assert steps[2] == (CheckpointHistory(persistent=(c3,)), (c1, c2))


@pytest.mark.parametrize("order", list(Mode))
def test_checkpoints_without_the_score_attribute_rank_lowest(order: Mode) -> None:
    policy = CheckpointPolicy(num_to_keep=1, score_attribute="score", score_order=order)
    unscored, scored = persistent("/c1", other=1.0), persistent("/c2", score=100.0)
    assert save_all(policy, [unscored, scored])[1] == (
        CheckpointHistory(persistent=(scored,)),
        (unscored,),
    )


def test_an_unscored_newest_is_kept_then_dropped_first() -> None:
    policy = CheckpointPolicy(num_to_keep=1, score_attribute="score")
    c1, c2, c3 = (
        persistent("/c1", score=1.0),
        persistent("/c2", score="n/a"),
        persistent("/c3", score=0.0),
    )
    steps = save_all(policy, [c1, c2, c3])
    assert steps[1] == (CheckpointHistory(persistent=(c1, c2)), ())
    assert steps[2] == (CheckpointHistory(persistent=(c1, c3)), (c2,))


def test_a_nested_score_attribute_is_read_through_the_flattened_metrics() -> None:
    policy = CheckpointPolicy(num_to_keep=1, score_attribute="val/acc")
    c1 = persistent("/c1", val={"acc": 0.9})
    c2 = persistent("/c2", val={"acc": 0.1})
    c3 = persistent("/c3", val={"acc": 0.5})
    assert save_all(policy, [c1, c2, c3])[2] == (CheckpointHistory(persistent=(c1, c3)), (c2,))


def test_the_default_score_is_the_training_iteration() -> None:
    policy = CheckpointPolicy(num_to_keep=1)
    c1 = CheckpointRef(storage=PERSISTENT, path="/c1", metrics={"training_iteration": 1})
    c2 = CheckpointRef(storage=PERSISTENT, path="/c2", metrics={"training_iteration": 2})
    assert save_all(policy, [c1, c2])[1] == (CheckpointHistory(persistent=(c2,)), (c1,))


def test_saving_to_a_held_path_replaces_the_entry_instead_of_deleting() -> None:
    policy = CheckpointPolicy(num_to_keep=1, score_attribute="score")
    old, new = persistent("/same", score=5.0), persistent("/same", score=1.0)
    assert save_all(policy, [old, new])[1] == (CheckpointHistory(persistent=(new,)), ())


def test_saving_to_a_held_path_moves_it_to_the_newest_position() -> None:
    policy = CheckpointPolicy(score_attribute="score")
    a, b = persistent("/a", score=1.0), persistent("/b", score=2.0)
    a_again = persistent("/a", score=3.0)
    assert save_all(policy, [a, b, a_again])[2] == (CheckpointHistory(persistent=(b, a_again)), ())


def test_memory_checkpoints_replace_each_other_without_deletions() -> None:
    policy = CheckpointPolicy(num_to_keep=1)
    start = CheckpointHistory(persistent=(P1,))
    first, dropped_first = record_checkpoint(start, memory("obj-1"), policy)
    second, dropped_second = record_checkpoint(first, memory("obj-2"), policy)
    assert first == CheckpointHistory(
        persistent=(P1,), memory=memory("obj-1"), memory_is_newest=True
    )
    assert second == CheckpointHistory(
        persistent=(P1,), memory=memory("obj-2"), memory_is_newest=True
    )
    assert dropped_first == dropped_second == ()


def test_a_persistent_checkpoint_after_a_memory_one_becomes_the_newest() -> None:
    policy = CheckpointPolicy()
    history = CheckpointHistory(persistent=(P1,), memory=M1, memory_is_newest=True)
    updated, dropped = record_checkpoint(history, P2, policy)
    assert updated == CheckpointHistory(persistent=(P1, P2), memory=M1, memory_is_newest=False)
    assert dropped == ()


def test_a_plain_string_score_order_that_is_accepted_is_honoured() -> None:
    fields: dict[str, Any] = {"num_to_keep": 1, "score_attribute": "score", "score_order": "max"}
    policy = CheckpointPolicy(**fields)
    low, high, newest = (
        persistent("/low", score=1.0),
        persistent("/high", score=9.0),
        persistent("/newest", score=5.0),
    )
    assert policy.score_order is Mode.MAX
    history = CheckpointHistory()
    dropped: list[CheckpointRef] = []
    for checkpoint in (low, high, newest):
        history, dropped_now = record_checkpoint(history, checkpoint, policy)
        dropped += dropped_now
    assert history == CheckpointHistory(persistent=(high, newest))
    assert dropped == [low]


def test_record_checkpoint_leaves_its_inputs_alone() -> None:
    history = CheckpointHistory(persistent=(P1,))
    snapshot = msgspec.structs.replace(history)
    record_checkpoint(history, P2, CheckpointPolicy(num_to_keep=1))
    assert history == snapshot


@given(
    iteration=st.integers(min_value=0, max_value=10**9),
    again=st.integers(min_value=0, max_value=50),
    generation=st.integers(min_value=1, max_value=10**8),
)
def test_a_generation_s_checkpoint_name_gives_back_the_driver_s_name_and_the_generation(
    iteration: int, again: int, generation: int
) -> None:
    """Every name the driver gives (`checkpoint_N`, `checkpoint_N_n`)
    stored by a generation's worker reads back as that name and that
    generation; the driver's name itself has none (0), and two
    generations never share a name."""
    name = checkpoint_dirname(iteration) + (f"_{again}" if again else "")
    assert dirname_generation(name) == (name, 0)
    assert dirname_generation(generation_dirname(name, generation)) == (name, generation)
    assert generation_dirname(name, generation) != generation_dirname(name, generation + 1)
