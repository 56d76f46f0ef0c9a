"""Result bookkeeping: flattening, annotation and the running metric analysis.

The expected statistics are computed by hand from the seed's formula
`avg' = (value + (step - 1) * avg) / step` with `step = training_iteration or 1`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from tunecore.core.lifecycle import record_result
from tunecore.core.results import annotate, flatten
from tunecore.model import JsonDict, MetricStats, TrialSpec, TrialState


def folded(results: Iterable[JsonDict]) -> TrialState:
    """A trial that recorded `results`, in order."""
    trial = TrialState(spec=TrialSpec(trial_id="t1", trainable_name="train"))
    for at, result in enumerate(results):
        trial = record_result(trial, result, float(at), terminate=False)
    return trial


def fold(results: Iterable[JsonDict]) -> dict[str, MetricStats]:
    return folded(results).metric_analysis


# --- flatten -----------------------------------------------------------------


def test_flatten_joins_nested_keys_with_slashes() -> None:
    result: JsonDict = {"a": {"b": 1, "c": {"d": 2}}, "e": 3}
    assert flatten(result) == {"a/b": 1, "a/c/d": 2, "e": 3}


def test_flatten_leaves_lists_and_scalars_untouched() -> None:
    result: JsonDict = {"xs": [1, {"a": 2}], "name": "run", "flag": True, "none": None}
    assert flatten(result) == {"xs": [1, {"a": 2}], "name": "run", "flag": True, "none": None}


def test_flatten_opens_a_dict_of_a_subclass_too() -> None:
    """A flat result is told by its values' types; a value whose type is
    a dict's subclass (an OrderedDict a user reported) is still opened."""
    result: JsonDict = {"loss": 1.0, "extra": OrderedDict(b=2)}
    assert flatten(result) == {"loss": 1.0, "extra/b": 2}


def test_flatten_of_an_empty_result_is_empty() -> None:
    assert flatten({}) == {}


def test_flatten_honours_another_separator() -> None:
    assert flatten({"a": {"b": 1}}, separator=".") == {"a.b": 1}


def test_flatten_does_not_modify_its_argument() -> None:
    result: JsonDict = {"a": {"b": 1}}
    flatten(result)
    assert result == {"a": {"b": 1}}


# --- annotate ----------------------------------------------------------------


def test_annotate_adds_trial_id_and_done() -> None:
    annotated = annotate({"loss": 0.5}, trial_id="t1", done=False, experiment_tag="")
    assert annotated == {"loss": 0.5, "trial_id": "t1", "done": False}


def test_annotate_adds_the_experiment_tag_only_when_non_empty() -> None:
    annotated = annotate({"loss": 0.5}, trial_id="t1", done=True, experiment_tag="3_lr=0.1")
    assert annotated == {"loss": 0.5, "trial_id": "t1", "done": True, "experiment_tag": "3_lr=0.1"}


def test_annotate_overrides_a_done_flag_in_the_result_and_copies() -> None:
    result: JsonDict = {"done": True}
    annotated = annotate(result, trial_id="t1", done=False, experiment_tag="")
    assert annotated == {"done": False, "trial_id": "t1"}
    assert result == {"done": True}


# --- analyse -----------------------------------------------------------------


def test_the_first_value_of_a_metric_is_its_max_min_avg_and_last() -> None:
    analysis = fold([{"training_iteration": 1, "loss": 4.0}])
    assert analysis == {
        "training_iteration": MetricStats(max=1, min=1, avg=1, last=1),
        "loss": MetricStats(max=4.0, min=4.0, avg=4.0, last=4.0),
    }


def test_running_statistics_over_consecutive_iterations() -> None:
    analysis = fold(
        [
            {"training_iteration": 1, "loss": 4.0},
            {"training_iteration": 2, "loss": 2.0},
            {"training_iteration": 3, "loss": 6.0},
        ]
    )
    # loss avg: 4 -> (2 + 1*4)/2 = 3 -> (6 + 2*3)/3 = 4 (the arithmetic mean).
    assert analysis["loss"] == MetricStats(max=6.0, min=2.0, avg=4.0, last=6.0)
    # training_iteration avg: 1 -> (2 + 1*1)/2 = 1.5 -> (3 + 2*1.5)/3 = 2.
    assert analysis["training_iteration"] == MetricStats(max=3, min=1, avg=2.0, last=3)


def test_the_average_weights_by_iteration_when_iterations_are_skipped() -> None:
    analysis = fold([{"training_iteration": 1, "x": 10.0}, {"training_iteration": 4, "x": 2.0}])
    # step 4: (2 + 3*10)/4 = 8
    assert analysis["x"] == MetricStats(max=10.0, min=2.0, avg=8.0, last=2.0)


def test_a_missing_or_zero_iteration_counts_as_step_one() -> None:
    # With step 1 the new average is the value itself: (v + 0*avg)/1.
    missing = fold([{"x": 10.0}, {"x": 2.0}])
    assert missing["x"] == MetricStats(max=10.0, min=2.0, avg=2.0, last=2.0)
    zero = fold([{"training_iteration": 0, "x": 10.0}, {"training_iteration": 0, "x": 6.0}])
    assert zero["x"] == MetricStats(max=10.0, min=6.0, avg=6.0, last=6.0)


def test_a_metric_first_seen_later_starts_from_its_own_value() -> None:
    analysis = fold(
        [
            {"training_iteration": 1, "a": 1.0},
            {"training_iteration": 2, "a": 3.0, "b": 8.0},
        ]
    )
    assert analysis["a"] == MetricStats(max=3.0, min=1.0, avg=2.0, last=3.0)
    assert analysis["b"] == MetricStats(max=8.0, min=8.0, avg=8.0, last=8.0)


def test_a_metric_missing_from_a_result_keeps_its_statistics() -> None:
    analysis = fold([{"training_iteration": 1, "a": 5.0}, {"training_iteration": 2}])
    assert analysis["a"] == MetricStats(max=5.0, min=5.0, avg=5.0, last=5.0)


def test_booleans_strings_and_lists_are_not_analysed() -> None:
    analysis = fold(
        [{"done": True, "flag": False, "name": "run", "xs": [1, 2], "none": None, "x": 1}]
    )
    assert set(analysis) == {"x"}


def test_nested_metrics_appear_under_joined_names() -> None:
    analysis = fold(
        [
            {"training_iteration": 1, "val": {"loss": 0.5, "acc": {"top1": 0.25}}},
            {"training_iteration": 2, "val": {"loss": 1.5, "acc": {"top1": 0.75}}},
        ]
    )
    assert set(analysis) == {"training_iteration", "val/loss", "val/acc/top1"}
    assert analysis["val/loss"] == MetricStats(max=1.5, min=0.5, avg=1.0, last=1.5)
    assert analysis["val/acc/top1"] == MetricStats(max=0.75, min=0.25, avg=0.5, last=0.75)


def test_recording_a_result_does_not_modify_the_previous_state() -> None:
    before = folded([{"training_iteration": 1, "x": 1.0}, {"training_iteration": 2, "x": 1.0}])
    kept, analysis = dict(before.stats_beyond_last), before.metric_analysis
    record_result(before, {"training_iteration": 3, "x": 3.0}, 3.0, terminate=False)
    assert (before.stats_beyond_last, before.metric_analysis) == (kept, analysis)
