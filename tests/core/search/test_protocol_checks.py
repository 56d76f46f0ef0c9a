"""`wants_values`, `wants_ask` and `hears_pauses` answer once per type what
`isinstance` against the runtime protocols answers (3.11 recomputes a
protocol's members at every `isinstance`)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.search.base import (
    HearsPauses,
    WantsAsk,
    WantsValues,
    hears_pauses,
    wants_ask,
    wants_values,
)
from tunecore.model import Asked, JsonValue


class Values:
    def wanted(self) -> None:
        return None

    def with_values(self, key: int, values: Sequence[JsonValue]) -> Values:
        return self


class Ask:
    def ask_wanted(self) -> None:
        return None

    def with_answer(self, answer: Asked) -> Ask:
        return self

    def declining(self) -> None:
        return None

    def ask_again(self, *, anew: bool = False) -> Ask:
        return self


class Pauses:
    def on_trial_pause(self, trial_id: str) -> Pauses:
        return self

    def on_trial_unpause(self, trial_id: str) -> Pauses:
        return self


class HalfOfValues:
    def wanted(self) -> None:
        return None


@pytest.mark.parametrize(
    "policy", [Values(), Ask(), Pauses(), HalfOfValues(), FIFOScheduler(), object(), 1, None]
)
def test_each_check_answers_as_isinstance_does(policy: object) -> None:
    for _ in range(2):  # the second answer comes from the cache
        assert wants_values(policy) is isinstance(policy, WantsValues)
        assert wants_ask(policy) is isinstance(policy, WantsAsk)
        assert hears_pauses(policy) is isinstance(policy, HearsPauses)


def test_the_protocols_are_told_apart() -> None:
    assert [wants_values(Values()), wants_ask(Values()), hears_pauses(Values())] == [
        True,
        False,
        False,
    ]
    assert [wants_values(Ask()), wants_ask(Ask()), hears_pauses(Pauses())] == [False, True, True]
