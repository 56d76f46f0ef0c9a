"""The snapshot keeps each experiment-level field once and counts the rest
from the trials, so a field added to `ExperimentState` must be placed."""

from __future__ import annotations

from tunecore.core.experiment import ExperimentConfig, ExperimentState, new_experiment, step
from tunecore.core.experiment.books import Books
from tunecore.core.experiment.snapshot import FACTS, decode_state, encode_state
from tunecore.model import ClusterResourcesChanged, Rejection, Resources, TrialRequested


def test_every_state_field_is_a_fact_the_trials_or_counted_from_them() -> None:
    state = new_experiment(ExperimentConfig(trainable_name="t"))
    counted = set(Books(state).counts()) | {"saves"}
    assert set(FACTS) | {"trials"} | counted == set(ExperimentState.__struct_fields__)
    assert not set(FACTS) & counted


def test_a_decoded_snapshot_is_the_state_it_was_made_of() -> None:
    state = new_experiment(ExperimentConfig(trainable_name="t"))
    for event in (
        ClusterResourcesChanged(at=1.0, total=Resources(cpu=1)),
        TrialRequested(at=2.0, config={"x": 1}),
        TrialRequested(at=3.0, config={"x": 2}),
    ):
        stepped = step(state, event)
        assert not isinstance(stepped, Rejection)
        state = stepped[0]
    assert decode_state(encode_state(state)) == state
