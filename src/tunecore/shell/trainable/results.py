"""Results as a worker trainable returns them: the user's metrics made plain
JSON, and the fields tunecore fills in.

Both APIs fill the same fields, with Ray's rules:

- kept when the user set them: `time_this_iter_s` (else measured: the time
  the function ran since it was resumed after its previous report, or the
  duration of `step()`), `done` (else False) and `training_iteration` (else
  the count of results: 1, 2, ... continuing from a restored checkpoint's
  count; Ray's `result.setdefault`, so a function's own counter is what
  stop criteria, schedulers and the result files see, the count going on
  beneath it);
- always set by tunecore (a user value is replaced):
  `time_total_s` (the sum of `time_this_iter_s`, also continued),
  `iterations_since_restore`, `time_since_restore`, `timestamp` (whole
  seconds since the epoch), `pid` and `hostname`;
- counted only from results that report their increments, Ray's (and
  RLlib's) convention: `timesteps_total` and `episodes_total`, the sums of
  `timesteps_this_iter` and `episodes_this_iter` (continued from a restored
  checkpoint, and kept when the user set them), and
  `timesteps_since_restore` (always set, once non-zero).

Reported values become plain JSON when they are reported, before anything
logs them (`json_result`), the way Ray's fallback JSON encoder writes them:
NumPy scalars and arrays (anything with `tolist()`) become Python numbers
and lists, other numbers `int` or `float`, tuples lists, NaN stays NaN, and
anything else its `str()` (its type name if even that fails); the values
that were no plain JSON go to the driver too, as the objects reported
(`result_objects`: nothing records them). Only a value
the event log cannot store fails its trial, at the `report()` that carries
it (`tunecore.model.storable`: an integer beyond 64 bits, text with a lone
surrogate, nesting deeper than 100; or a result too large for one record of
the log, `MAX_RESULT_BYTES`). Configs and checkpoint dicts are
stricter (`plain_json_dict`): what goes in must come back out unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import os
import socket
import sys
import time
from collections.abc import Mapping

from tunecore.core.results import (
    DATE,
    DATE_FORMAT,
    DONE,
    EPISODES_THIS_ITER,
    EPISODES_TOTAL,
    HOSTNAME,
    ITERATIONS_SINCE_RESTORE,
    NODE_IP,
    PID,
    TIME_SINCE_RESTORE,
    TIME_THIS_ITER_S,
    TIME_TOTAL_S,
    TIMESTAMP,
    TIMESTEPS_SINCE_RESTORE,
    TIMESTEPS_THIS_ITER,
    TIMESTEPS_TOTAL,
    TRAINING_ITERATION,
)
from tunecore.model import JsonDict, JsonValue
from tunecore.model.codec import to_msgpack
from tunecore.model.numbers import is_finite_number
from tunecore.model.storable import (
    MAX_DEPTH,
    MAX_RECORD_BYTES,
    TOO_DEEP,
    UnstorableValueError,
    check_storable,
    encoding_error,
)
from tunecore.shell.trainable.checkpoint_files import CheckpointMeta
from tunecore.shell.trainable.result_objects import JSON_SCALARS, with_objects, without

MAX_RESULT_BYTES = MAX_RECORD_BYTES - (64 << 10)
"""The largest result a trial may report (msgpack-encoded): its event, with
the fields tunecore adds, must fit one record of the event log."""

_HOSTNAME = socket.gethostname()


@functools.cache
def node_ip() -> str:
    """This node's IP address, as Ray reports it in a Ray worker (Ray's
    `node_ip`); elsewhere what the host name resolves to, else loopback.
    Asked once per process, at the first result."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        address: str = ray.util.get_node_ip_address()
        return address
    try:
        return socket.gethostbyname(_HOSTNAME)
    except OSError:
        return "127.0.0.1"


_TEXT = frozenset({str})


def plain_json_dict(where: str, value: object) -> JsonDict:
    """A plain-JSON deep copy of a user's result (or config, or checkpoint dict).

    Keys must be strings; values JSON values, where tuples become lists and
    scalars with an `.item()` method (NumPy and PyTorch scalars, which users
    report all the time) become the Python number they hold. Anything else
    is a TypeError naming the key, the type and what is accepted."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a dict with string keys, got {type(value).__name__}")
    return _json_dict(where, value)


def _json_dict(where: str, mapping: Mapping[object, object]) -> JsonDict:
    copied: JsonDict = {}
    for key, value in mapping.items():
        if not isinstance(key, str):
            raise TypeError(
                f"{where}: the key {key!r} is of type {type(key).__name__}; keys are strings"
            )
        copied[key] = _json_value(f"{where}[{key!r}]", value)
    return copied


def _json_value(where: str, value: object) -> JsonValue:
    if type(value) in JSON_SCALARS:
        return value  # type: ignore[return-value]
    if isinstance(value, Mapping):
        return _json_dict(where, value)
    if isinstance(value, list | tuple):
        return [_json_value(f"{where}[{i}]", item) for i, item in enumerate(value)]
    # Subclasses of the scalars (numpy.float64 is a float) become the plain type.
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    item = getattr(value, "item", None)
    if callable(item):
        plain = item()
        if type(plain) in JSON_SCALARS:
            return plain  # type: ignore[no-any-return]
    raise TypeError(
        f"{where} is of type {type(value).__name__} ({value!r:.60}); report JSON values: "
        "None, bool, int, float, str, lists and dicts of them (or NumPy-style scalars)"
    )


def json_result(where: str, metrics: object) -> JsonDict:
    """A user's reported metrics as plain JSON, converted as the module doc
    says; refused only if not a dict at all (TypeError) or holding a value
    the log cannot store (`UnstorableValueError`, a ValueError)."""
    if not isinstance(metrics, Mapping):
        raise TypeError(f"{where} must be a dict with string keys, got {type(metrics).__name__}")
    flat_json = JSON_SCALARS.issuperset(map(type, metrics.values()))
    if flat_json and _TEXT.issuperset(map(type, metrics)):
        result = dict(metrics)  # the common case, JSON as it is: told without a call per value
    else:
        try:
            result = {_as_text(key): _fallback_value(value, 2) for key, value in metrics.items()}
        except _TooDeep:
            check_storable(where, metrics)  # names the place, when dicts and lists nest
            raise UnstorableValueError(where, metrics, TOO_DEEP) from None
    try:
        size = len(to_msgpack(result))  # the log's own encoding: the cheapest check
    except (OverflowError, UnicodeEncodeError) as error:
        raise encoding_error(where, result, error) from None
    if size > MAX_RESULT_BYTES:
        raise UnstorableValueError(
            where,
            result,
            f"a result of at most {MAX_RESULT_BYTES} bytes as msgpack, not {size} "
            "(a large array belongs in a checkpoint)",
        )
    return result if flat_json else with_objects(result, metrics)


class _TooDeep(Exception):
    """A reported value nests deeper than `MAX_DEPTH` (the result is level 1)."""


def _fallback_value(value: object, depth: int) -> JsonValue:
    if type(value) in JSON_SCALARS:
        return value  # type: ignore[return-value]
    if isinstance(value, Mapping):
        if depth > MAX_DEPTH:
            raise _TooDeep
        return {_as_text(key): _fallback_value(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        if depth > MAX_DEPTH:
            raise _TooDeep
        return [_fallback_value(item, depth + 1) for item in value]
    if isinstance(value, str):  # a subclass of str
        return str(value)
    # NumPy (and PyTorch) arrays and scalars: tolist() gives Python lists and
    # numbers; item() the number of a scalar-like without tolist().
    for method in ("tolist", "item"):
        convert = getattr(value, method, None)
        if callable(convert):
            try:
                plain = convert()
            except Exception:  # a stranger's method: try the next way
                continue
            if plain is not value:
                return _fallback_value(plain, depth)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Number):
        with contextlib.suppress(TypeError, ValueError):  # complex numbers
            return float(value)  # type: ignore[arg-type]
    return _as_text(value)


def _as_text(value: object) -> str:
    try:
        return str(value)
    except Exception:  # a broken __str__ must not fail the trial
        return type(value).__name__


class ResultClock:
    """The running counts behind the automatic fields of one trainable.

    Not thread-safe: only the executor's thread, calling the trainable one
    call at a time, touches it."""

    def __init__(self) -> None:
        self.iteration = 0
        self.time_total_s = 0.0
        self._since_restore = 0
        self._time_since_restore = 0.0
        self.timesteps_total: int | float | None = None
        """None until a result reports `timesteps_this_iter`."""
        self.episodes_total: int | float | None = None
        self._timesteps_since_restore: int | float = 0

    def fill(self, metrics: JsonDict, measured_s: float) -> JsonDict:
        """Count one result and complete `metrics` (in place; returned)."""
        seconds = metrics.setdefault(TIME_THIS_ITER_S, measured_s)
        if not is_finite_number(seconds):
            raise TypeError(
                f"the result's {TIME_THIS_ITER_S}={seconds!r} must be a finite number of seconds"
            )
        self.iteration += 1
        self._since_restore += 1
        self.time_total_s += seconds
        self._time_since_restore += seconds
        metrics.setdefault(DONE, False)
        timesteps = _increment(metrics, TIMESTEPS_THIS_ITER)
        if timesteps is not None:
            self.timesteps_total = (self.timesteps_total or 0) + timesteps
            self._timesteps_since_restore += timesteps
        episodes = _increment(metrics, EPISODES_THIS_ITER)
        if episodes is not None:
            self.episodes_total = (self.episodes_total or 0) + episodes
        # The user's own totals are kept, as Ray keeps them.
        if self.timesteps_total is not None:
            metrics.setdefault(TIMESTEPS_TOTAL, self.timesteps_total)
        if self.episodes_total is not None:
            metrics.setdefault(EPISODES_TOTAL, self.episodes_total)
        fields = self.fields()
        if TRAINING_ITERATION in metrics:  # the user's own, kept as Ray keeps it
            del fields[TRAINING_ITERATION]
        metrics.update(fields)
        without(metrics, fields)
        return metrics

    def fields(self) -> JsonDict:
        """The fields as they stand, `training_iteration` the count."""
        now = time.time()
        fields: JsonDict = {
            TRAINING_ITERATION: self.iteration,
            TIME_TOTAL_S: self.time_total_s,
            ITERATIONS_SINCE_RESTORE: self._since_restore,
            TIME_SINCE_RESTORE: self._time_since_restore,
            TIMESTAMP: int(now),
            DATE: time.strftime(DATE_FORMAT, time.localtime(now)),
            PID: os.getpid(),
            HOSTNAME: _HOSTNAME,
            NODE_IP: node_ip(),
        }
        if self._timesteps_since_restore:
            fields[TIMESTEPS_SINCE_RESTORE] = self._timesteps_since_restore
        return fields

    def meta(self) -> CheckpointMeta:
        """What a checkpoint of the current state records about it."""
        return CheckpointMeta(
            training_iteration=self.iteration,
            time_total_s=self.time_total_s,
            timesteps_total=self.timesteps_total,
            episodes_total=self.episodes_total,
        )

    def restored(self, meta: CheckpointMeta | None) -> None:
        """Continue from a checkpoint's counts; with no metadata (a directory
        tunecore did not save) the totals stay as they are."""
        if meta is not None:
            self.iteration = meta.training_iteration
            self.time_total_s = meta.time_total_s
            self.timesteps_total = meta.timesteps_total
            self.episodes_total = meta.episodes_total
        self._since_restore = 0
        self._time_since_restore = 0.0
        self._timesteps_since_restore = 0


def _increment(metrics: JsonDict, key: str) -> int | float | None:
    """The count a result reports under `key` (None when it reports none),
    which must be a finite number: Ray adds it up, failing on anything else."""
    value = metrics.get(key)
    if value is None:
        return None
    if not is_finite_number(value):
        raise TypeError(f"the result's {key}={value!r} must be a finite number")
    return value
