"""The snapshot keeps each experiment-level field once and counts the rest
from the trials, so a field added to `ExperimentState` must be placed."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from tunecore.core.experiment import ExperimentConfig, ExperimentState, new_experiment, step
from tunecore.core.experiment.books import Books
from tunecore.core.experiment.snapshot import (
    COMPACT_ANALYSIS_FORMAT,
    FACTS,
    SNAPSHOT_FORMAT,
    NewerSnapshotError,
    decode_state,
    encode_state,
)
from tunecore.model import ClusterResourcesChanged, Rejection, Resources, TrialRequested
from tunecore.shell.journal import SnapshotStore


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


GOLDEN = Path(__file__).parents[2] / "golden" / "log_v1"


def _golden_state() -> bytes:
    """The state bytes of the golden log's last snapshot, written in format 1."""
    snapshot = SnapshotStore(GOLDEN).load(29)
    assert snapshot is not None
    return snapshot.state


def test_a_format_1_snapshot_answers_the_whole_analysis_it_stored() -> None:
    data = _golden_state()
    raw = msgspec.msgpack.decode(data)
    assert raw["format"] == 1
    state = decode_state(data)
    stored = {t["spec"]["trial_id"]: t.get("metric_analysis", {}) for t in raw["trials"]}
    assert any(stored.values())
    for trial_id, trial in state.trials.items():
        analysis = {
            metric: list(msgspec.structs.astuple(s)) for metric, s in trial.metric_analysis.items()
        }
        assert analysis == stored[trial_id]
        # Kept compact, as a live run keeps it: a told metric is not stored.
        assert len(trial.stats_beyond_last) < len(stored[trial_id]) or not stored[trial_id]


def test_a_state_with_results_is_written_as_format_2_and_reads_back() -> None:
    state = decode_state(_golden_state())
    encoded = encode_state(state)
    assert msgspec.msgpack.decode(encoded)["format"] == COMPACT_ANALYSIS_FORMAT == SNAPSHOT_FORMAT
    assert decode_state(encoded) == state
    assert len(encoded) < len(_golden_state())


def test_a_state_without_results_is_written_as_format_1_as_before() -> None:
    state = new_experiment(ExperimentConfig(trainable_name="t"))
    stepped = step(state, TrialRequested(at=2.0, config={"x": 1}))
    assert not isinstance(stepped, Rejection)
    assert msgspec.msgpack.decode(encode_state(stepped[0]))["format"] == 1


def test_a_snapshot_of_a_newer_format_is_refused() -> None:
    state = new_experiment(ExperimentConfig(trainable_name="t"))
    raw = msgspec.msgpack.decode(encode_state(state))
    raw["format"] = SNAPSHOT_FORMAT + 1
    with pytest.raises(NewerSnapshotError, match="newer"):
        decode_state(msgspec.msgpack.encode(raw))
