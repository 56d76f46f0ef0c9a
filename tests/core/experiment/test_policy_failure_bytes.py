"""`SearcherFailed`/`SchedulerFailed.resumable` (the trials a policy
object's failure cuts short are left to a resume) is a field old logs lack:
an event without it encodes to the bytes such a log holds, and those bytes
read back as the event they were, which replays as it ran
(`test_step.py`, `test_step_stateful.py`)."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec import UNSET

from tunecore.model import ExperimentEvent, InvalidFieldError, SchedulerFailed, SearcherFailed
from tunecore.model.codec import from_json, from_msgpack, to_json, to_msgpack


class OldSearcherFailed(msgspec.Struct, frozen=True, kw_only=True, tag="SearcherFailed"):
    """`SearcherFailed` as logs before `resumable` wrote it."""

    at: float
    error: str


class OldSchedulerFailed(msgspec.Struct, frozen=True, kw_only=True, tag="SchedulerFailed"):
    """`SchedulerFailed` as logs before `resumable` wrote it."""

    at: float
    error: str


PAIRS = [(SearcherFailed, OldSearcherFailed), (SchedulerFailed, OldSchedulerFailed)]
moments = st.floats(0.0, 4e9, allow_nan=False)


@pytest.mark.parametrize(("kind", "old"), PAIRS)
@given(at=moments, error=st.text(max_size=40), resumable=st.sampled_from([UNSET, False]))
def test_an_event_without_the_flag_has_the_bytes_of_an_old_log(
    kind: type[SearcherFailed | SchedulerFailed],
    old: type[OldSearcherFailed | OldSchedulerFailed],
    at: float,
    error: str,
    resumable: bool,
) -> None:
    event = kind(at=at, error=error, resumable=resumable)
    written = old(at=at, error=error)
    assert to_msgpack(event) == to_msgpack(written)
    assert to_json(event) == to_json(written)
    for read in (
        from_msgpack(to_msgpack(written), ExperimentEvent),
        from_json(to_json(written), ExperimentEvent),
    ):
        assert read == kind(at=at, error=error)
        assert read.resumable is UNSET


@pytest.mark.parametrize("kind", [SearcherFailed, SchedulerFailed])
@given(at=moments, error=st.text(max_size=40))
def test_the_flag_round_trips(
    kind: type[SearcherFailed | SchedulerFailed], at: float, error: str
) -> None:
    event = kind(at=at, error=error, resumable=True)
    assert from_msgpack(to_msgpack(event), ExperimentEvent) == event
    assert from_json(to_json(event), ExperimentEvent) == event


@pytest.mark.parametrize("kind", [SearcherFailed, SchedulerFailed])
def test_a_flag_that_is_no_boolean_is_refused_by_name(
    kind: type[SearcherFailed | SchedulerFailed],
) -> None:
    with pytest.raises(InvalidFieldError, match=rf"{kind.__name__}\.resumable"):
        kind(at=1.0, error="x", resumable="yes")  # type: ignore[arg-type]
