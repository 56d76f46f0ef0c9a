"""Repeater: groups of `repeat` trials per suggestion, judged by their mean."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.search.support import Completion, Recorder
from tunecore.core.search import (
    TRIAL_INDEX,
    BasicVariantGenerator,
    Repeater,
    SearchPolicy,
    Suggestion,
    grid_search,
    uniform,
)
from tunecore.model import InvalidFieldError, Mode
from tunecore.model.codec import from_msgpack, to_msgpack


def hand_out(
    repeater: Repeater[Recorder], count: int
) -> tuple[Repeater[Recorder], list[Suggestion]]:
    suggestions = []
    for index in range(count):
        repeater, suggestion = repeater.suggest(f"t{index}")
        assert suggestion is not None
        suggestions.append(suggestion)
    return repeater, suggestions


def test_it_is_a_searcher() -> None:
    repeater = Repeater(Recorder(), repeat=2, metric="loss")
    searcher: SearchPolicy = repeater
    assert not searcher.is_finished


def test_each_suggestion_is_handed_out_repeat_times_with_its_index() -> None:
    repeater, suggestions = hand_out(Repeater(Recorder(), repeat=3, metric="loss"), 6)
    assert [s.config for s in suggestions] == [
        {"n": 0, TRIAL_INDEX: 0},
        {"n": 0, TRIAL_INDEX: 1},
        {"n": 0, TRIAL_INDEX: 2},
        {"n": 1, TRIAL_INDEX: 0},
        {"n": 1, TRIAL_INDEX: 1},
        {"n": 1, TRIAL_INDEX: 2},
    ]
    assert repeater.searcher.suggested == ("t0", "t3")
    assert [g.members for g in repeater.groups] == [("t0", "t1", "t2"), ("t3", "t4", "t5")]
    assert all(s.experiment_tag == "0_n=0" for s in suggestions[:3])


def test_without_set_index_the_configs_are_the_wrapped_searchers() -> None:
    _, suggestions = hand_out(Repeater(Recorder(), repeat=2, set_index=False, metric="m"), 2)
    assert [s.config for s in suggestions] == [{"n": 0}, {"n": 0}]


def test_the_copies_of_a_config_share_nothing() -> None:
    generator = BasicVariantGenerator({"layers": [1, grid_search([2])]})
    repeater = Repeater(generator, repeat=2, metric="loss")
    repeater, first = repeater.suggest("a")
    repeater, second = repeater.suggest("b")
    assert first is not None
    assert second is not None
    layers = first.config["layers"]
    assert isinstance(layers, list)
    layers.append(3)
    assert second.config["layers"] == [1, 2]


def test_the_group_mean_is_reported_once_under_the_primary_id() -> None:
    repeater, _ = hand_out(Repeater(Recorder(), repeat=3, metric="loss"), 3)
    repeater = repeater.on_trial_complete("t1", {"loss": 2.0})
    repeater = repeater.on_trial_complete("t0", {"loss": 1.0})
    assert repeater.searcher.completions == ()
    repeater = repeater.on_trial_complete("t2", {"loss": 6.0})
    assert repeater.searcher.completions == (Completion("t0", {"loss": 3.0}, False),)
    assert repeater.groups == ()


def test_missing_metrics_are_left_out_of_the_mean_like_nanmean() -> None:
    repeater, _ = hand_out(Repeater(Recorder(), repeat=4, metric="loss"), 4)
    repeater = repeater.on_trial_complete("t0", {"loss": 4.0})
    repeater = repeater.on_trial_complete("t1", None)
    repeater = repeater.on_trial_complete("t2", {"loss": math.nan})
    repeater = repeater.on_trial_complete("t3", {"accuracy": 0.5, "loss": "n/a"})
    assert repeater.searcher.completions == (Completion("t0", {"loss": 4.0}, False),)


def test_a_group_without_any_metric_reports_nan() -> None:
    repeater, _ = hand_out(Repeater(Recorder(), repeat=2, metric="loss"), 2)
    repeater = repeater.on_trial_complete("t0", None, error=True)
    repeater = repeater.on_trial_complete("t1", {}, error=True)
    (completion,) = repeater.searcher.completions
    assert completion.trial_id == "t0"
    assert completion.error
    assert completion.result is not None
    assert math.isnan(completion.result["loss"])  # type: ignore[arg-type]


def test_the_error_flag_is_the_one_of_the_trial_completing_the_group() -> None:
    repeater, _ = hand_out(Repeater(Recorder(), repeat=2, metric="loss"), 2)
    repeater = repeater.on_trial_complete("t0", {"loss": 1.0}, error=True)
    repeater = repeater.on_trial_complete("t1", {"loss": 3.0}, error=False)
    assert repeater.searcher.completions == (Completion("t0", {"loss": 2.0}, False),)


def test_strangers_and_second_completions_are_ignored() -> None:
    repeater, _ = hand_out(Repeater(Recorder(), repeat=2, metric="loss"), 1)
    assert repeater.on_trial_complete("stranger", {"loss": 1.0}) is repeater
    repeater = repeater.on_trial_complete("t0", {"loss": 1.0})
    assert repeater.on_trial_complete("t0", {"loss": 5.0}) is repeater


def test_intermediate_results_are_not_forwarded() -> None:
    repeater, _ = hand_out(Repeater(Recorder(), repeat=2, metric="loss"), 1)
    assert repeater.on_trial_result("t0", {"loss": 1.0}) is repeater


def test_it_is_finished_only_once_the_last_group_is_handed_out() -> None:
    repeater = Repeater(Recorder(budget=1), repeat=3, metric="loss")
    repeater, _ = repeater.suggest("t0")
    assert repeater.searcher.is_finished
    assert not repeater.is_finished
    repeater, _ = hand_out(repeater, 2)
    assert repeater.is_finished
    assert repeater.suggest("t9")[1] is None


def test_the_metric_comes_from_the_experiment_unless_set_here() -> None:
    repeater = Repeater(Recorder(), repeat=2).with_objective("loss", Mode.MIN)
    assert (repeater.metric, repeater.mode) == ("loss", Mode.MIN)
    assert repeater.searcher.metric == "loss"
    own = Repeater(Recorder(), repeat=2, metric="acc").with_objective("loss", Mode.MAX)
    assert (own.metric, own.mode, own.searcher.metric) == ("acc", Mode.MAX, "acc")


def test_without_any_metric_it_refuses_to_run() -> None:
    with pytest.raises(InvalidFieldError, match=r"Repeater\.metric"):
        Repeater(Recorder(), repeat=2).with_objective(None, None)
    repeater, _ = hand_out(Repeater(Recorder(), repeat=1), 1)
    with pytest.raises(InvalidFieldError, match=r"Repeater\.metric"):
        repeater.on_trial_complete("t0", {"loss": 1.0})


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"repeat": 0}, "Repeater.repeat"), ({"metric": ""}, "Repeater.metric")],
)
def test_invalid_settings_are_rejected(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidFieldError) as raised:
        Repeater(Recorder(), **kwargs)  # type: ignore[arg-type]
    assert raised.value.field == field


def test_it_round_trips_when_parametrised_with_the_wrapped_type() -> None:
    space = {"a": grid_search([1, 2]), "x": uniform(0, 1)}
    repeater = Repeater(BasicVariantGenerator(space), repeat=2, metric="loss", mode=Mode.MIN)
    repeater, _ = repeater.suggest("t0")
    repeater = repeater.on_trial_complete("t0", {"loss": 1.0})
    decoded = from_msgpack(to_msgpack(repeater), Repeater[BasicVariantGenerator])
    assert decoded == repeater
    assert decoded.suggest("t1") == repeater.suggest("t1")


@settings(max_examples=100, deadline=None)
@given(
    repeat=st.integers(1, 4),
    groups=st.integers(1, 4),
    data=st.data(),
)
def test_every_group_is_reported_once_with_the_mean_of_its_scores(
    repeat: int, groups: int, data: st.DataObject
) -> None:
    repeater = Repeater(Recorder(budget=groups), repeat=repeat, metric="loss")
    repeater, suggestions = hand_out(repeater, repeat * groups)
    assert repeater.is_finished
    scores = {
        f"t{i}": data.draw(st.floats(-1e6, 1e6) | st.none(), label=f"t{i}")
        for i in range(repeat * groups)
    }
    order = data.draw(st.permutations(sorted(scores)), label="completion order")
    expected: list[tuple[str, float | None]] = []
    remaining = {g: set(range(g * repeat, (g + 1) * repeat)) for g in range(groups)}
    for trial_id in order:
        score = scores[trial_id]
        repeater = repeater.on_trial_complete(trial_id, None if score is None else {"loss": score})
        number = int(trial_id[1:])
        group = number // repeat
        remaining[group].discard(number)
        if not remaining[group]:
            members = [scores[f"t{i}"] for i in range(group * repeat, (group + 1) * repeat)]
            present = [s for s in members if s is not None]
            expected.append(
                (f"t{group * repeat}", sum(present) / len(present) if present else None)
            )
        assert len(repeater.searcher.completions) == len(expected)
    assert repeater.groups == ()
    for completion, (primary, mean) in zip(repeater.searcher.completions, expected, strict=True):
        assert completion.trial_id == primary
        assert completion.result is not None
        reported = completion.result["loss"]
        assert isinstance(reported, float)
        if mean is None:
            assert math.isnan(reported)
        else:
            assert reported == pytest.approx(mean, rel=1e-9, abs=1e-6)
    assert [s.config["n"] for s in suggestions] == [g for g in range(groups) for _ in range(repeat)]
