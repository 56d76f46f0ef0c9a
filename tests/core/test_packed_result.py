"""A finished trial keeps its last result packed (`TrialState.recorded_result`):
everything read from it, and every byte stored of it, is what the plain
dict gave, for any result."""

from __future__ import annotations

import math

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from tests.strategies import json_dicts, specs
from tunecore.model import JsonDict, JsonValue, MetricStats, TrialState, TrialStatus
from tunecore.model.codec import from_msgpack, to_msgpack
from tunecore.model.packed import PackedMap

FINISHED = st.sampled_from([TrialStatus.TERMINATED, TrialStatus.ERROR])
ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, width=64)
stats = st.dictionaries(
    st.sampled_from(["loss", "acc", "time_total_s"]),
    st.builds(MetricStats, *[ANY_FLOAT] * 4),
    max_size=3,
).map(lambda kept: dict(sorted(kept.items())))
results = st.builds(
    lambda plain, metrics: {**plain, **metrics},
    json_dicts,
    st.dictionaries(st.sampled_from(["loss", "acc", "training_iteration"]), ANY_FLOAT, max_size=3),
)


def same(a: JsonValue, b: JsonValue) -> bool:
    """Equal, of the same types, in the same key order; NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def plain_twin(state: TrialState, result: JsonDict, kept: dict[str, MetricStats]) -> TrialState:
    """`state` holding `result` and `kept` as the dicts they were (as
    before packing)."""
    twin = msgspec.structs.replace(state)
    msgspec.structs.force_setattr(twin, "recorded_result", result)
    msgspec.structs.force_setattr(twin, "recorded_stats", kept)
    return twin


@given(spec=specs, result=results, kept=stats, status=FINISHED)
def test_a_finished_trial_reads_and_stores_its_result_as_the_dict_it_was(
    spec: object, result: JsonDict, kept: dict[str, MetricStats], status: TrialStatus
) -> None:
    running = TrialState(
        spec=spec,  # type: ignore[arg-type]
        status=TrialStatus.RUNNING,
        recorded_result=result,
        recorded_stats=kept,
    )
    finished = msgspec.structs.replace(running, status=status)
    assert running.recorded_result is result  # a running trial's are the dicts themselves
    assert running.recorded_stats is kept
    packed: tuple[object, object] = (finished.recorded_result, finished.recorded_stats)
    assert isinstance(packed[0], PackedMap) or not result  # not the annotation's types
    assert isinstance(packed[1], PackedMap) or not kept
    assert same(finished.last_result, result)
    assert to_msgpack(finished.stats_beyond_last) == to_msgpack(kept)
    assert list(finished.stats_beyond_last) == list(kept)
    assert finished.has_result == bool(result)
    assert list(finished.metric_analysis) == list(running.metric_analysis)
    for metric, stats in running.metric_analysis.items():
        assert to_msgpack(finished.metric_stats(metric)) == to_msgpack(stats)
    encoded = to_msgpack(finished)
    assert encoded == to_msgpack(plain_twin(finished, result, kept))  # the same bytes stored
    decoded = from_msgpack(encoded, TrialState)
    assert decoded == finished  # packed again as it decodes
    assert to_msgpack(decoded) == encoded


@given(spec=specs, status=FINISHED)
def test_a_trial_that_never_reported_keeps_an_empty_dict(spec: object, status: TrialStatus) -> None:
    finished = TrialState(spec=spec, status=status)  # type: ignore[arg-type]
    assert finished.recorded_result == finished.recorded_stats == {}
    assert finished.last_result == {}
    assert finished.stats_beyond_last == {}
    assert not finished.has_result


@given(spec=specs, other=specs, status=FINISHED)
def test_finished_trials_share_one_empty_dict_and_hand_out_new_ones(
    spec: object, other: object, status: TrialStatus
) -> None:
    # Without a result, or without stats beyond it (nearly every finished
    # trial), a trial keeps the one shared empty dict: no dict of its own
    # per finished trial. A read gives a new dict, so changing it changes
    # no trial.
    first = TrialState(spec=spec, status=status)  # type: ignore[arg-type]
    second = msgspec.structs.replace(
        TrialState(spec=other, status=TrialStatus.RUNNING),  # type: ignore[arg-type]
        status=status,
    )
    assert first.recorded_result is second.recorded_result
    assert first.recorded_stats is second.recorded_stats is first.recorded_result
    read = first.last_result
    read["loss"] = 1.0
    first.stats_beyond_last["loss"] = MetricStats(1.0, 1.0, 1.0, 1.0)
    assert second.last_result == {}
    assert second.stats_beyond_last == {}
    assert first.last_result == {}
    assert to_msgpack(first) == to_msgpack(plain_twin(first, {}, {}))
    assert from_msgpack(to_msgpack(first), TrialState) == first
