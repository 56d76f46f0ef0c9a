"""A trial keeps only the metric statistics its last result does not tell
(`model.analysis`), and answers `metric_analysis` as it did when it kept
them all: checked against the whole analysis folded the way it was before
(`reference_fold`, the former `core.results.analyse`), over results,
restores of a checkpoint's metrics and ends, with NaNs, signed zeros, ints,
flags, nested and vanishing metrics."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from tunecore.core.lifecycle import record_result
from tunecore.core.results import TRAINING_ITERATION, flatten, marked_done, with_last_result
from tunecore.model import JsonDict, JsonValue, MetricStats, TrialSpec, TrialState
from tunecore.model.analysis import compact, whole
from tunecore.model.numbers import is_number


def reference_fold(
    analysis: Mapping[str, MetricStats], flat_result: Mapping[str, JsonValue]
) -> dict[str, MetricStats]:
    """The whole analysis with one more result, as it was kept in full."""
    step_value = flat_result.get(TRAINING_ITERATION)
    step = float(step_value) if is_number(step_value) and step_value else 1.0
    keep, add = (step - 1.0) / step, 1.0 / step
    updated = dict(analysis)
    for metric, value in flat_result.items():
        if not is_number(value):
            continue
        number = float(value)
        previous = analysis.get(metric)
        if previous is None:
            updated[metric] = MetricStats(number, number, number, number)
        else:
            hi, lo = previous.max, previous.min
            updated[metric] = MetricStats(
                hi if hi > number else number,
                lo if lo < number else number,
                previous.avg * keep + number * add,
                number,
            )
    return updated


def exactly(analysis: Mapping[str, MetricStats]) -> bytes:
    """The analysis as bytes, by metric: NaNs and zeros' signs compared too."""
    return msgspec.msgpack.encode(sorted(analysis.items()))


NAMES = st.sampled_from(["loss", "acc", "training_iteration", "done", "trial_id", "n"])
VALUES = st.one_of(
    st.floats(),
    st.sampled_from([0.0, -0.0, 1.0, float("nan")]),
    st.integers(-3, 3),
    st.booleans(),
    st.text(max_size=2),
    st.none(),
    st.dictionaries(st.just("x"), st.sampled_from([0.5, 2])),
)
RESULTS = st.dictionaries(NAMES, VALUES, max_size=4)
STEPS: st.SearchStrategy[list[tuple[str, JsonDict]]] = st.lists(
    st.one_of(
        st.tuples(st.just("result"), RESULTS),
        st.tuples(st.just("restore"), RESULTS),
        st.tuples(st.just("done"), st.just({})),
    ),
    max_size=6,
)


@given(STEPS, st.sampled_from(["", "0_x=1"]))
def test_the_analysis_answers_what_the_whole_analysis_did(
    steps: list[tuple[str, JsonDict]], tag: str
) -> None:
    trial = TrialState(spec=TrialSpec(trial_id="t1", trainable_name="train", experiment_tag=tag))
    reference: dict[str, MetricStats] = {}
    for at, (kind, values) in enumerate(steps):
        if kind == "result":
            trial = record_result(trial, values, float(at), terminate=False)
            reference = reference_fold(reference, flatten(values))
        elif kind == "restore" and values:  # a checkpoint's metrics become the last result
            trial = with_last_result(trial, values)
        else:
            trial = marked_done(trial)
        assert exactly(trial.metric_analysis) == exactly(reference)
        # Kept in the one form the rule gives: what decoding an old snapshot makes.
        kept, unanalysed = compact(reference, flatten(trial.last_result))
        assert (exactly(trial.stats_beyond_last), trial.unanalysed) == (exactly(kept), unanalysed)
        assert list(trial.stats_beyond_last) == sorted(trial.stats_beyond_last)


def test_a_one_report_trial_keeps_no_stats() -> None:
    trial = TrialState(spec=TrialSpec(trial_id="t1", trainable_name="train"))
    trial = record_result(
        trial, {"score": 0.5, "training_iteration": 1, "pid": 7, "ok": True}, 1.0, terminate=True
    )
    assert trial.stats_beyond_last == {}
    assert trial.metric_analysis == {
        "score": MetricStats(0.5, 0.5, 0.5, 0.5),
        "training_iteration": MetricStats(1.0, 1.0, 1.0, 1.0),
        "pid": MetricStats(7.0, 7.0, 7.0, 7.0),
    }


def test_a_metric_that_varies_is_kept_and_one_that_does_not_is_told() -> None:
    trial = TrialState(spec=TrialSpec(trial_id="t1", trainable_name="train"))
    for iteration, loss in ((1, 4.0), (2, 2.0)):
        trial = record_result(
            trial, {"loss": loss, "training_iteration": iteration, "pid": 7}, 1.0, terminate=False
        )
    assert set(trial.stats_beyond_last) == {"loss", "training_iteration"}
    assert trial.metric_analysis["loss"] == MetricStats(4.0, 2.0, 3.0, 2.0)
    assert trial.metric_analysis["pid"] == MetricStats(7.0, 7.0, 7.0, 7.0)


def test_a_restored_checkpoints_metrics_do_not_change_the_analysis() -> None:
    trial = TrialState(spec=TrialSpec(trial_id="t1", trainable_name="train"))
    trial = record_result(trial, {"loss": 3.0}, 1.0, terminate=False)
    restored = with_last_result(trial, {"loss": 1.0, "other": 5.0})
    assert restored.last_result == {"loss": 1.0, "other": 5.0}
    assert restored.metric_analysis == {"loss": MetricStats(3.0, 3.0, 3.0, 3.0)}
    assert restored.unanalysed == ("other",)
    assert whole(restored.stats_beyond_last, (), flatten(restored.last_result)) != (
        restored.metric_analysis
    )
