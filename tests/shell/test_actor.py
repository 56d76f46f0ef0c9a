"""`TrialActor`, the class Ray actors are made of: a `TrialHost` behind
three methods (Ray wraps and disassembles every method when it exports
the class), one of which reaches the host's other calls by name."""

from __future__ import annotations

import inspect
import pickle

import pytest

from tunecore.shell.executors.actor import HOST_CALLS, TrialActor, packed
from tunecore.shell.executors.host import TrialHost

PACKED = {"assign_and_train_packed": "assign_and_train", "train_many_packed": "train_many"}


def _methods(cls: type) -> set[str]:
    return {name for name, member in vars(cls).items() if inspect.isfunction(member)}


def test_it_has_the_packed_calls_and_call_and_nothing_else() -> None:
    assert _methods(TrialActor) == {"__init__", "call", *PACKED}
    hosts = _methods(TrialHost)
    assert set(PACKED.values()) <= hosts
    for name in PACKED:
        own = inspect.signature(getattr(TrialActor, name)).parameters
        assert [p for p in own if p != "_ray_trace_ctx"] == ["self", "payload"]


def test_call_reaches_the_public_host_calls_and_nothing_else() -> None:
    public = {name for name in _methods(TrialHost) if not name.startswith("_")}
    assert public - set(PACKED.values()) == HOST_CALLS

    class Host:
        def location(self) -> tuple[str, int]:
            return ("here", 1)

    actor = TrialActor.__new__(TrialActor)
    actor._host = Host()  # type: ignore[assignment]
    assert actor.call("location") == ("here", 1)
    with pytest.raises(AttributeError, match="'_redirect' is not one of"):
        actor.call("_redirect")


def test_packed_is_one_pickle_with_cloudpickle_for_what_pickle_cannot() -> None:
    assert pickle.loads(packed(1, "a", (2.0,))) == (1, "a", (2.0,))
    (double,) = pickle.loads(packed(lambda x: 2 * x))
    assert double(3) == 6
