"""The class a Ray actor is made of: a `TrialHost` behind the methods the
Ray executor calls, and nothing else.

Why not make the actor of `TrialHost` itself: Ray wraps every method of an
actor class for tracing, then hashes a disassembly of the class and of
every wrapper when it exports the class, on the driver, before the first
actor can start. With `TrialHost`'s helpers the disassembly took 16 ms of
the driver's CPU and the first actor's creation 20 ms; with this class, 8
and 12 ms. Every method here is one an executor calls by name; the work is
`TrialHost`'s.

The calls that start a trial or carry results, which come once per trial or
per batch of results, take their arguments and give their reply `packed`.
The others are rare and go through Ray's own serialization.

Like `.host`, this module is loaded by every Ray worker: it imports no Ray
and nothing of the driver.
"""

from __future__ import annotations

import pickle

import cloudpickle

from tunecore.model import JsonDict
from tunecore.shell.executors.host import TrainableFactory, TrialHost
from tunecore.shell.trainable.worker import TrialContext


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


class TrialActor:
    """A Ray actor's `TrialHost`: see the module docstring."""

    def __init__(self, factory: TrainableFactory) -> None:
        self._host = TrialHost(factory)

    def location(self) -> tuple[str, int]:
        return self._host.location()

    def assign(self, config: JsonDict, context: TrialContext) -> tuple[str, int]:
        return self._host.assign(config, context)

    def assign_and_train_packed(self, payload: bytes) -> bytes:
        """`TrialHost.assign_and_train`, its arguments and reply `packed`."""
        return packed(*self._host.assign_and_train(*pickle.loads(payload)))

    def train_many_packed(self, payload: bytes) -> bytes:
        """`TrialHost.train_many`, its arguments and reply `packed`."""
        return packed(*self._host.train_many(*pickle.loads(payload)))

    def train(self) -> JsonDict:
        return self._host.train()

    def reset(self, config: JsonDict, context: TrialContext) -> bool:
        return self._host.reset(config, context)

    def save(self, checkpoint_dir: str) -> str:
        return self._host.save(checkpoint_dir)

    def save_to_bytes(self) -> bytes:
        return self._host.save_to_bytes()

    def restore(self, path: str) -> None:
        self._host.restore(path)

    def restore_from_bytes(self, data: bytes) -> None:
        self._host.restore_from_bytes(data)

    def export(self, formats: list[str], export_dir: str) -> dict[str, str]:
        return self._host.export(formats, export_dir)

    def release(self) -> None:
        self._host.release()
