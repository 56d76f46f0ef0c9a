"""The class a Ray actor is made of: a `TrialHost` behind the few methods
the Ray executor calls, and nothing else.

Why not make the actor of `TrialHost` itself: Ray wraps every method of an
actor class for tracing, then hashes a disassembly of the class and of
every wrapper when it exports the class, on the driver, before the first
actor can start, at about 0.4 ms a method. With `TrialHost`'s helpers the
first actor's creation took 20 ms of the driver's CPU; with one method per
host call, 11-15 ms; with the three here, 6.5-8 ms (measured by creating
the first actor after `ray.init`).

The calls that start a trial or carry results, which come once per trial or
per batch of results, have a method each and take their arguments and give
their reply `packed`. Every other call (`HOST_CALLS`: an assignment, a save,
a restore, a release, ...) comes once per trial or less and goes through
`call`, by name, with Ray's own serialization.

Like `.host`, this module is loaded by every Ray worker: it imports no Ray
and nothing of the driver.
"""

from __future__ import annotations

import pickle

import cloudpickle

from tunecore.shell.executors.host import TrainableFactory, TrialHost


def packed(*args: object) -> bytes:
    """The arguments or the reply of a `*_packed` call, as one pickle.

    Ray serializes each argument and reply of a call on its own, through
    msgpack with cloudpickle for what msgpack lacks (a `TrialContext`, a
    tuple), and building a cloudpickle pickler for each took more of the
    driver's time per trial than the rest of the submit (measured: 280
    against 135 us of CPU per `assign_and_train` in 1,000 one-report
    trials). Plain pickle does the same in a few microseconds, with
    cloudpickle as the fallback for what it cannot (a lambda in a config).
    Only code and values in flight go this way; nothing is persisted."""
    try:
        return pickle.dumps(args, protocol=5)
    except Exception:
        return cloudpickle.dumps(args, protocol=5)


HOST_CALLS = frozenset(
    {
        "assign",
        "export",
        "location",
        "release",
        "reset",
        "restore",
        "restore_from_bytes",
        "save",
        "save_to_bytes",
        "train",
    }
)
"""The `TrialHost` methods `TrialActor.call` reaches."""


class TrialActor:
    """A Ray actor's `TrialHost`: see the module docstring."""

    def __init__(self, factory: TrainableFactory) -> None:
        self._host = TrialHost(factory)

    def assign_and_train_packed(self, payload: bytes) -> bytes:
        """`TrialHost.assign_and_train`, its arguments and reply `packed`."""
        return packed(*self._host.assign_and_train(*pickle.loads(payload)))

    def train_many_packed(self, payload: bytes) -> bytes:
        """`TrialHost.train_many`, its arguments and reply `packed`."""
        return packed(*self._host.train_many(*pickle.loads(payload)))

    def call(self, method: str, *args: object) -> object:
        """`TrialHost.<method>(*args)`, for a method in `HOST_CALLS`."""
        if method not in HOST_CALLS:
            raise AttributeError(f"TrialActor.call: {method!r} is not one of {sorted(HOST_CALLS)}")
        return getattr(self._host, method)(*args)
