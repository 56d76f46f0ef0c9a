"""`TrialActor`, the class Ray actors are made of: a `TrialHost` behind
the methods the Ray executor calls, with the same signatures, and no other
methods (Ray wraps and disassembles every one when it exports the class)."""

from __future__ import annotations

import inspect
import pickle

from tunecore.shell.executors.actor import TrialActor, packed
from tunecore.shell.executors.host import TrialHost

PACKED = {"assign_and_train_packed": "assign_and_train", "train_many_packed": "train_many"}


def _methods(cls: type) -> dict[str, inspect.Signature]:
    """Public methods by name, with their signatures as written (Ray adds
    a `_ray_trace_ctx` keyword to the signature of an actor class's methods
    once it has made the class an actor)."""
    signatures = {}
    for name, member in vars(cls).items():
        if inspect.isfunction(member) and not name.startswith("_"):
            signature = inspect.signature(member)
            own = [p for p in signature.parameters.values() if p.name != "_ray_trace_ctx"]
            signatures[name] = signature.replace(parameters=own)
    return signatures


def test_every_method_is_the_hosts_with_its_signature() -> None:
    hosts = _methods(TrialHost)
    for name, signature in _methods(TrialActor).items():
        if name in PACKED:
            assert PACKED[name] in hosts
            assert list(signature.parameters) == ["self", "payload"]
        else:
            assert hosts[name] == signature, name


def test_it_has_no_methods_the_executor_does_not_call() -> None:
    called_by_name = {"restore", "restore_from_bytes", "save", "save_to_bytes", "reset", "export"}
    called_directly = {"location", "assign", "train", "release", *PACKED}
    assert set(_methods(TrialActor)) == called_by_name | called_directly
    helpers = [
        name
        for name, member in vars(TrialActor).items()
        if inspect.isfunction(member) and name.startswith("_")
    ]
    assert helpers == ["__init__"]


def test_packed_is_one_pickle_with_cloudpickle_for_what_pickle_cannot() -> None:
    assert pickle.loads(packed(1, "a", (2.0,))) == (1, "a", (2.0,))
    (double,) = pickle.loads(packed(lambda x: 2 * x))
    assert double(3) == 6
