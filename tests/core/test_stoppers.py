"""The built-in stoppers as pure policies: each verdict is what Ray Tune's
mutable stopper (python/ray/tune/stopper/*.py) says for the same results,
and a stopper decoded from msgpack goes on exactly as the live one."""

from __future__ import annotations

import datetime
import math
from collections import defaultdict, deque
from collections.abc import Sequence

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunecore.core.stoppers import (
    AnyOf,
    BuiltinStopper,
    ExperimentPlateauStopper,
    MaximumIterationStopper,
    NoopStopper,
    TimeoutStopper,
    TrialPlateauStopper,
    combine,
)
from tunecore.model import InvalidFieldError, JsonDict

# -- Ray's algorithms, written plainly, as the oracle ----------------------


def _std(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


class RayMaximumIteration:
    def __init__(self, max_iter: int) -> None:
        self.max_iter = max_iter
        self.iter: defaultdict[str, int] = defaultdict(int)

    def __call__(self, trial_id: str, result: JsonDict) -> bool:
        self.iter[trial_id] += 1
        return self.iter[trial_id] >= self.max_iter


class RayTrialPlateau:
    def __init__(
        self,
        metric: str,
        *,
        std: float,
        num_results: int,
        grace_period: int,
        threshold: float | None,
        mode: str | None,
    ) -> None:
        self.metric, self.std, self.num_results = metric, std, num_results
        self.grace_period, self.threshold, self.mode = grace_period, threshold, mode
        self.iter: defaultdict[str, int] = defaultdict(int)
        self.results: defaultdict[str, deque[float]] = defaultdict(
            lambda: deque(maxlen=num_results)
        )

    def __call__(self, trial_id: str, result: JsonDict) -> bool:
        value = result[self.metric]
        assert isinstance(value, float)
        self.results[trial_id].append(value)
        self.iter[trial_id] += 1
        if self.iter[trial_id] < self.grace_period:
            return False
        if len(self.results[trial_id]) < self.num_results:
            return False
        if self.threshold is not None:
            if self.mode == "min" and value > self.threshold:
                return False
            if self.mode == "max" and value < self.threshold:
                return False
        return _std(self.results[trial_id]) < self.std


class RayExperimentPlateau:
    def __init__(self, metric: str, std: float, top: int, mode: str, patience: int) -> None:
        self.metric, self.std, self.top, self.mode, self.patience = metric, std, top, mode, patience
        self.iterations = 0
        self.top_values: list[float] = []

    def __call__(self, trial_id: str, result: JsonDict) -> bool:
        value = result[self.metric]
        assert isinstance(value, float)
        self.top_values.append(value)
        ordered = sorted(self.top_values)
        self.top_values = ordered[: self.top] if self.mode == "min" else ordered[-self.top :]
        self.iterations = self.iterations + 1 if self.has_plateaued() else 0
        return self.stop_all()

    def has_plateaued(self) -> bool:
        return len(self.top_values) == self.top and _std(self.top_values) <= self.std

    def stop_all(self) -> bool:
        return self.has_plateaued() and self.iterations >= self.patience


# -- Hypothesis: same verdicts as Ray, and snapshots continue exactly ------------

trial_ids = st.sampled_from(["a", "b", "c"])
# Few distinct values, so plateaus (equal values) actually happen.
values = st.sampled_from([0.0, 0.5, 1.0, 1.001, 2.0, -3.0])
results = st.lists(st.tuples(trial_ids, values), max_size=40)


def verdicts(stopper: BuiltinStopper, stream: list[tuple[str, float]], metric: str) -> list[bool]:
    """The stopper's verdicts; halfway, it is encoded and decoded, as a
    resume from a snapshot would."""
    said = []
    for number, (trial_id, value) in enumerate(stream):
        if number == len(stream) // 2:
            encoded = msgspec.msgpack.encode(stopper)
            stopper = msgspec.msgpack.decode(encoded, type=BuiltinStopper)
        stopper, stop = stopper.on_result(trial_id, {metric: value})
        said.append(stop)
    return said


@settings(max_examples=200, deadline=None)
@given(stream=results, max_iter=st.integers(0, 6))
def test_maximum_iteration_says_what_ray_says(
    stream: list[tuple[str, float]], max_iter: int
) -> None:
    ray = RayMaximumIteration(max_iter)
    expected = [ray(t, {"m": v}) for t, v in stream]
    assert verdicts(MaximumIterationStopper(max_iter), stream, "m") == expected


@settings(max_examples=300, deadline=None)
@given(
    stream=results,
    std=st.sampled_from([0.0, 0.01, 0.6, 2.0]),
    num_results=st.integers(1, 5),
    grace_period=st.integers(0, 5),
    threshold=st.sampled_from([None, 0.5, 1.0]),
    mode=st.sampled_from(["min", "max"]),
)
def test_trial_plateau_says_what_ray_says(
    *,
    stream: list[tuple[str, float]],
    std: float,
    num_results: int,
    grace_period: int,
    threshold: float | None,
    mode: str,
) -> None:
    ray = RayTrialPlateau(
        "m",
        std=std,
        num_results=num_results,
        grace_period=grace_period,
        threshold=threshold,
        mode=mode,
    )
    expected = [ray(t, {"m": v}) for t, v in stream]
    stopper = TrialPlateauStopper(
        "m",
        std=std,
        num_results=num_results,
        grace_period=grace_period,
        metric_threshold=threshold,
        mode=mode,  # type: ignore[arg-type]
    )
    assert verdicts(stopper, stream, "m") == expected


@settings(max_examples=300, deadline=None)
@given(
    stream=results,
    std=st.sampled_from([0.001, 0.01, 0.6, 2.0]),
    top=st.integers(2, 4),
    mode=st.sampled_from(["min", "max"]),
    patience=st.integers(0, 3),
)
def test_experiment_plateau_says_what_ray_says(
    stream: list[tuple[str, float]], std: float, top: int, mode: str, patience: int
) -> None:
    ray = RayExperimentPlateau("m", std, top, mode, patience)
    expected = [ray(t, {"m": v}) for t, v in stream]
    stopper = ExperimentPlateauStopper("m", std=std, top=top, mode=mode, patience=patience)  # type: ignore[arg-type]
    said = verdicts(stopper, stream, "m")
    assert said == expected
    final = stopper
    for trial_id, value in stream:
        final, _ = final.on_result(trial_id, {"m": value})
    assert (final.stop_all(0.0) is not None) == ray.stop_all()


@settings(max_examples=200, deadline=None)
@given(stream=results, max_iter=st.integers(1, 6), grace=st.integers(0, 4))
def test_a_combination_stops_on_the_first_that_says_so(
    stream: list[tuple[str, float]], max_iter: int, grace: int
) -> None:
    """Ray's `CombinedStopper` asks in order and stops at the first True,
    so a later stopper does not see that result."""
    first = RayMaximumIteration(max_iter)
    second = RayTrialPlateau(
        "m", std=0.01, num_results=2, grace_period=grace, threshold=None, mode=None
    )
    expected = [first(t, {"m": v}) or second(t, {"m": v}) for t, v in stream]
    combined = combine(
        (
            MaximumIterationStopper(max_iter),
            TrialPlateauStopper("m", num_results=2, grace_period=grace),
        )
    )
    assert verdicts(combined, stream, "m") == expected  # type: ignore[arg-type]


# -- examples ------------------------------------------------------------------


def test_a_trial_plateau_waits_for_the_grace_period_and_a_full_window() -> None:
    stopper = TrialPlateauStopper("loss", num_results=3, grace_period=5)
    said = []
    for _ in range(6):
        stopper, stop = stopper.on_result("t", {"loss": 1.0})
        said.append(stop)
    assert said == [False, False, False, False, True, True]


def test_a_trial_plateau_never_stops_on_a_window_with_a_missing_value() -> None:
    stopper = TrialPlateauStopper("loss", num_results=2, grace_period=0)
    stopper, _ = stopper.on_result("t", {"loss": 1.0})
    stopper, stop = stopper.on_result("t", {"other": 1.0})
    assert not stop
    stopper, stop = stopper.on_result("t", {"loss": 1.0})
    assert not stop  # the window still holds the missing value
    stopper, stop = stopper.on_result("t", {"loss": 1.0})
    assert stop


def test_a_trial_plateau_reads_nested_metrics_by_their_flat_name() -> None:
    stopper = TrialPlateauStopper("val/loss", num_results=1, grace_period=0, std=1.0)
    _, stop = stopper.on_result("t", {"val/loss": 0.5})
    assert stop


def test_an_experiment_plateau_ignores_results_without_its_metric() -> None:
    stopper = ExperimentPlateauStopper("acc", top=2)
    stopper, _ = stopper.on_result("a", {"acc": 0.5})
    same, stop = stopper.on_result("b", {"loss": 1.0})
    assert same == stopper
    assert not stop
    stopper, stop = stopper.on_result("b", {"acc": 0.5})
    assert stop
    assert stopper.stop_all(0.0) is not None


@pytest.mark.parametrize(
    "timeout", [2.5, datetime.timedelta(seconds=2.5)], ids=["seconds", "timedelta"]
)
def test_a_timeout_stops_everything_once_the_experiment_ran_that_long(
    timeout: float | datetime.timedelta,
) -> None:
    stopper = TimeoutStopper(timeout)
    assert stopper.seconds == 2.5
    assert stopper.stop_all(2.4) is None
    assert stopper.stop_all(2.5) == "Reached timeout of 2.5 seconds (TimeoutStopper)"
    assert stopper.on_result("t", {}) == (stopper, False)


def test_a_timeout_from_a_timedelta_encodes_as_seconds() -> None:
    stopper = TimeoutStopper(datetime.timedelta(minutes=1))
    decoded = msgspec.msgpack.decode(msgspec.msgpack.encode(stopper), type=TimeoutStopper)
    assert decoded == TimeoutStopper(60)
    assert decoded.timeout == 60.0


def test_the_noop_stopper_stops_nothing() -> None:
    assert NoopStopper().on_result("t", {"done": True}) == (NoopStopper(), False)
    assert NoopStopper().stop_all(1e9) is None


def test_a_combination_stops_everything_when_any_part_does() -> None:
    combined = combine((NoopStopper(), AnyOf((TimeoutStopper(1), MaximumIterationStopper(2)))))
    assert isinstance(combined, AnyOf)
    assert len(combined.stoppers) == 3  # flattened
    assert combined.stop_all(0.5) is None
    assert combined.stop_all(1.0) is not None


def test_combining_one_or_none_needs_no_combination() -> None:
    assert combine(()) is None
    assert combine((NoopStopper(),)) == NoopStopper()


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: MaximumIterationStopper(-1), "MaximumIterationStopper.max_iter"),
        (lambda: MaximumIterationStopper(2.5), "MaximumIterationStopper.max_iter"),  # type: ignore[arg-type]
        (lambda: TimeoutStopper("1h"), "TimeoutStopper.timeout"),  # type: ignore[arg-type]
        (lambda: TimeoutStopper(-1), "TimeoutStopper.timeout"),
        (lambda: TrialPlateauStopper(""), "TrialPlateauStopper.metric"),
        (lambda: TrialPlateauStopper("m", num_results=0), "TrialPlateauStopper.num_results"),
        (lambda: TrialPlateauStopper("m", metric_threshold=1.0), "TrialPlateauStopper.mode"),
        (lambda: TrialPlateauStopper("m", mode="up"), "TrialPlateauStopper.mode"),  # type: ignore[arg-type]
        (lambda: ExperimentPlateauStopper("m", mode="up"), "ExperimentPlateauStopper.mode"),  # type: ignore[arg-type]
        (lambda: ExperimentPlateauStopper("m", top=1), "ExperimentPlateauStopper.top"),
        (lambda: ExperimentPlateauStopper("m", std=0.0), "ExperimentPlateauStopper.std"),
        (lambda: ExperimentPlateauStopper("m", patience=-1), "ExperimentPlateauStopper.patience"),
    ],
)
def test_bad_settings_name_the_field(build: object, field: str) -> None:
    with pytest.raises(InvalidFieldError) as caught:
        build()  # type: ignore[operator]
    assert caught.value.field == field
