"""Hypothesis strategies for what a scheduler meets in a run: learning
curves, trials arriving while others run, failures, and trial sizes.
Needs the `testing` extra (`pip install "tunecore[testing]"`)."""

from __future__ import annotations

try:
    from hypothesis import strategies as st
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        'tunecore.testing needs Hypothesis: pip install "tunecore[testing]"'
    ) from error

from tunecore.model import Resources

METRIC_VALUES = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
"""One reported metric: any finite value, repeated values and zero included."""


@st.composite
def learning_curves(draw: st.DrawFn, *, max_length: int = 30) -> list[float]:
    """A trial's metric per iteration: noisy, improving, flat, plateaus
    after a fast start or slow starters that overtake late, as a mix of a
    trend and drawn noise (never NaN or infinite)."""
    length = draw(st.integers(min_value=1, max_value=max_length))
    start = draw(st.floats(min_value=-100, max_value=100))
    slope = draw(st.sampled_from([0.0, -1.0, 1.0, -0.1, 0.1, -10.0]))
    knee = draw(st.integers(min_value=0, max_value=length))
    noise = draw(st.lists(st.floats(min_value=-5, max_value=5), min_size=length, max_size=length))
    return [start + slope * min(i, knee) + noise[i] for i in range(length)]


def resource_shapes() -> st.SearchStrategy[Resources]:
    """What one trial asks: a fraction of a CPU up to several."""
    return st.sampled_from([0.5, 1.0, 1.0, 2.0]).map(lambda cpu: Resources(cpu=cpu))


def cluster_cpus() -> st.SearchStrategy[float]:
    """How many CPUs the driven cluster has: one trial at a time, or several."""
    return st.sampled_from([1.0, 2.0, 3.0, 4.0])
