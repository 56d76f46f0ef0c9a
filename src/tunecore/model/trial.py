"""One trial: what was fixed when it was created (`TrialSpec`) and where it
stands now (`TrialState`)."""

from __future__ import annotations

import copy
import enum
from collections.abc import Iterable

import msgspec

from tunecore.model.analysis import MetricStats, stats_of, whole
from tunecore.model.checkpoint import (
    CheckpointHistory,
    CheckpointPolicy,
    CheckpointRef,
    CheckpointStorage,
)
from tunecore.model.errors import InvalidFieldError, float_valued, require_int, require_name
from tunecore.model.json import JsonDict, flatten
from tunecore.model.packed import PackedMap, pack_exact, unpacked_on_read
from tunecore.model.packed import pack as pack_shared
from tunecore.model.resources import Resources

_PACK = msgspec.msgpack.Encoder()
_UNPACK = msgspec.msgpack.Decoder()


_UNPACK_STATS = msgspec.msgpack.Decoder(dict[str, MetricStats])
_UNPACK_STATS_VALUES = msgspec.msgpack.Decoder(list[MetricStats])

_NONE_KEPT: dict[str, object] = {}
"""The one empty dict every finished trial without a result, or without
stats beyond its last result (nearly all), keeps: a dict each was 64
bytes of the driver's memory per finished trial (issue 41). Never handed
out: `last_result` and `stats_beyond_last` give a new empty dict for it."""


Packed = PackedMap | msgspec.Raw
"""A finished trial's result or stats as `pack` keeps them."""


def unpack_stats(packed: Packed) -> dict[str, MetricStats]:
    """The metric stats `pack` packed (a new dict each time)."""
    if type(packed) is PackedMap:
        values = _UNPACK_STATS_VALUES.decode(packed.values_packed())
        return dict(zip(packed.keys(), values, strict=True))
    return _UNPACK_STATS.decode(packed)


def pack(result: JsonDict | dict[str, MetricStats]) -> Packed:
    """A result (or stats) packed (`model.packed`): encoded, it is the map's
    msgpack, which a snapshot stores. When this process has no room for
    another shape of keys, the map's msgpack itself (a `Raw`: a copy of
    the encoder's output, which can keep the larger block it grew in: a
    third more memory, kept as long as the trial)."""
    packed = pack_shared(result)
    if packed is not None:
        return packed
    return msgspec.Raw(bytes(memoryview(_PACK.encode(result))))


def unpack(packed: Packed) -> JsonDict:
    """The result `pack` packed (a new dict each time)."""
    if type(packed) is PackedMap:
        return packed.unpacked()  # type: ignore[return-value]
    result: JsonDict = _UNPACK.decode(packed)
    return result


class TrialStatus(enum.StrEnum):
    """PENDING waits for resources; RUNNING holds them; PAUSED gave them back
    meaning to resume; TERMINATED and ERROR are final."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    TERMINATED = "TERMINATED"
    ERROR = "ERROR"

    # The lifecycle looks up (status, event type) on every event: str's
    # own hash (each member's value is its name) is the hash Enum's would
    # compute, without a Python call.
    __hash__ = str.__hash__

    @property
    def is_finished(self) -> bool:
        return self in (TrialStatus.TERMINATED, TrialStatus.ERROR)


class ExportFormat(enum.StrEnum):
    """Formats a trainable may export its model in at the end of a trial."""

    CHECKPOINT = "checkpoint"
    MODEL = "model"
    ONNX = "onnx"
    H5 = "h5"


def parse_export_formats(formats: Iterable[object]) -> tuple[ExportFormat, ...]:
    """Case and surrounding spaces do not matter (`" H5 "` is `h5`); an
    unknown format is an error naming it and the accepted ones. (Every
    trial's spec is checked as a snapshot decodes: nothing is done for the
    usual none.)"""
    parsed = []
    for raw in formats:
        name = raw.strip().lower() if isinstance(raw, str) else ""
        try:
            parsed.append(ExportFormat(name))
        except ValueError:
            accepted = ", ".join(f.value for f in ExportFormat)
            raise InvalidFieldError("export_formats", raw, f"one of {accepted}") from None
    return tuple(parsed)


class Location(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The host and process a trial runs in, as last reported."""

    hostname: str | None = None
    pid: int | None = None

    def describe(self, local_hostname: str | None = None) -> str:
        """`pid=N` on the driver's own host, `host:pid` elsewhere, `` if unknown."""
        if self.pid is None:
            return ""
        if self.hostname is None or self.hostname == local_hostname:
            return f"pid={self.pid}"
        return f"{self.hostname}:{self.pid}"


def same_items(config: JsonDict, evaluated: JsonDict) -> bool:
    """Whether `evaluated` holds the very objects `config` does, under the
    same keys in the same order: then a spec keeps one dict for both (a
    flat sampled config is its own evaluated params; the second dict was
    0.2 KB of the driver's memory per trial). Identity, not equality: an
    int equal to a float, or 0.0 to -0.0, stays as it was given."""
    if len(config) != len(evaluated):
        return False
    return all(
        key is other_key or key == other_key
        for key, other_key in zip(config, evaluated, strict=True)
    ) and all(
        value is other for value, other in zip(config.values(), evaluated.values(), strict=True)
    )


class TrialSpec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """Everything fixed when a trial is created.

    Not tracked by the garbage collector (`gc=False`: its fields are
    names, numbers and JSON values, which cannot refer back to it), so a
    spec, kept as long as the experiment, carries no collector header.

    The trainable is referenced by its registered name or import path, never
    by a pickled object, so a persisted spec can be loaded without running
    code. `stopping_criterion` maps '/'-joined metric names to thresholds
    (numbers or booleans, which compare as 0 and 1); a trial stops once any
    metric reaches (>=) its threshold.

    A finished trial's state keeps its spec's `config` and
    `evaluated_params` packed (`packed_spec`): read, each is then a new
    dict, equal to the one given; keep it rather than reading it per key.
    """

    trial_id: str
    trainable_name: str
    config: JsonDict = {}
    evaluated_params: JsonDict = {}
    experiment_tag: str = ""
    resources: Resources = Resources()
    stopping_criterion: dict[str, float | bool] = {}
    checkpoint_policy: CheckpointPolicy = CheckpointPolicy()
    max_failures: int = 0
    export_formats: tuple[ExportFormat, ...] = ()
    restore_path: str | None = None
    custom_name: str | None = None

    def __post_init__(self) -> None:
        config, evaluated = _held_config(self), _held_evaluated(self)
        if (
            evaluated is not config
            and type(config) is dict
            and type(evaluated) is dict
            and same_items(config, evaluated)
        ):
            msgspec.structs.force_setattr(self, "evaluated_params", config)
        if self._plain():
            return
        require_name("TrialSpec.trial_id", self.trial_id)
        require_name("TrialSpec.trainable_name", self.trainable_name)
        require_int("TrialSpec.max_failures", self.max_failures, minimum=-1)
        formats = parse_export_formats(self.export_formats)
        msgspec.structs.force_setattr(self, "export_formats", formats)
        criteria: dict[str, object] = dict(self.stopping_criterion)
        for metric, threshold in criteria.items():
            field = f"TrialSpec.stopping_criterion[{metric!r}]"
            if isinstance(threshold, dict):
                raise InvalidFieldError(
                    field,
                    threshold,
                    "a number; nested criteria are flattened, so write the key "
                    f"'/'-joined, e.g. '{metric}/{next(iter(threshold), 'key')}'",
                )
            if not isinstance(threshold, int | float):  # a bool is an int
                raise InvalidFieldError(field, threshold, "a number or a boolean")
        msgspec.structs.force_setattr(
            self, "stopping_criterion", float_valued(self.stopping_criterion)
        )

    def _plain(self) -> bool:
        """The common case, which `__post_init__`'s checks would leave as it
        is: two names, a number of failures >= -1, no export formats and
        no stopping criterion. (A snapshot decodes one spec per trial: the
        checks' calls were a quarter of decoding one of 100,000 trials.
        Typed `object`: a caller may pass anything.)"""
        trial_id: object = self.trial_id
        trainable_name: object = self.trainable_name
        max_failures: object = self.max_failures
        criteria: object = self.stopping_criterion
        return (
            type(trial_id) is str
            and trial_id != ""
            and type(trainable_name) is str
            and trainable_name != ""
            and type(max_failures) is int
            and max_failures >= -1
            and self.export_formats == ()
            and type(criteria) is dict
            and not criteria
        )


_held_config, _held_evaluated = unpacked_on_read(TrialSpec, "config", "evaluated_params")
"""A finished trial's spec keeps its config and evaluated params packed
(`packed_spec`); `spec.config` and `spec.evaluated_params` read them as
the dicts they were, a new one on each read."""


def packed_spec(spec: TrialSpec) -> TrialSpec:
    """`spec` with its config and evaluated params packed (`model.packed`),
    as a finished trial keeps it: a copy, or `spec` itself when it is
    packed already or neither packs (a config that would not read back as
    itself, `pack_exact`: it stays the dict it was). A snapshot stores the
    packed spec as the same bytes. The two dicts, with their key tables,
    were 0.37 KB of the driver's memory per finished trial (issue 41);
    packed, with their keys shared per shape, under 0.1 KB."""
    config, evaluated = _held_config(spec), _held_evaluated(spec)
    if type(config) is not dict or type(evaluated) is not dict:
        return spec
    packed_config = _packed_dict(config)
    packed_evaluated = packed_config if evaluated is config else _packed_dict(evaluated)
    if packed_config is None and packed_evaluated is None:
        return spec
    packed = copy.copy(spec)
    if packed_config is not None:
        msgspec.structs.force_setattr(packed, "config", packed_config)
    if packed_evaluated is not None:
        msgspec.structs.force_setattr(packed, "evaluated_params", packed_evaluated)
    return packed


def unpacked_spec(spec: TrialSpec) -> TrialSpec:
    """`spec` as a trial that is not finished keeps it: its config and
    evaluated params dicts (a copy when `packed_spec` packed them: an
    ERROR trial restarted), so its state is the one a snapshot decodes."""
    config, evaluated = _held_config(spec), _held_evaluated(spec)
    if type(config) is not PackedMap and type(evaluated) is not PackedMap:
        return spec
    plain = copy.copy(spec)
    unpacked = spec.config
    msgspec.structs.force_setattr(plain, "config", unpacked)
    msgspec.structs.force_setattr(
        plain, "evaluated_params", unpacked if evaluated is config else spec.evaluated_params
    )
    return plain


def _packed_dict(mapping: JsonDict) -> PackedMap | None:
    """An empty dict is not packed: a snapshot omits it (the field's
    default), where it would store a packed one."""
    return pack_exact(mapping) if mapping else None


class Exploited(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The donor's checkpoint PBT's exploit gave a trial: the trial's state
    until it saves one of its own persistently, so a restart after the
    driver died (or a waiting trial's next start) restores it rather than
    the trial's own older one. `saves_ahead` counts the saves in flight when
    the exploit happened: they hold the trial's state from before, so their
    landing does not end this."""

    checkpoint: CheckpointRef
    saves_ahead: int = 0


class TrialState(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, gc=False):
    """Where one trial stands. Only `tunecore.core` computes new ones.

    `saving_to` lists the saves in flight, oldest first (a worker answers
    them in order), and `restoring_from` is set while the worker restores a
    checkpoint; `last_update_time` and
    `start_time` are event timestamps (seconds since the epoch), never a
    clock read.
    """

    spec: TrialSpec
    status: TrialStatus = TrialStatus.PENDING
    start_time: float | None = None
    recorded_result: JsonDict | msgspec.Raw = msgspec.field(default={}, name="last_result")
    """The last result, which `last_result` reads: a dict while the trial
    runs, packed once it has finished (`__post_init__`, `pack`: a
    `PackedMap` in memory, which the typed annotation does not show, as
    msgspec decodes only the other two). A snapshot stores each as the
    same map, byte for byte. A finished trial's result is kept as long as
    the experiment and seldom read: as a dict, with its keys' table and a
    Python object per value, a one-report trial's was 0.6 KB of the
    driver's memory, its msgpack half that, packed a quarter (issue 41)."""
    last_update_time: float | None = None
    recorded_stats: dict[str, MetricStats] | msgspec.Raw = msgspec.field(
        default={}, name="metric_analysis"
    )
    """The metric statistics `last_result` does not tell (`model.analysis`),
    which `stats_beyond_last` reads: packed once the trial has finished,
    as `recorded_result` is. The whole analysis is `metric_analysis`.
    Stored under the name the whole analysis had before snapshot format 2."""
    checkpoints: CheckpointHistory = CheckpointHistory()
    num_failures: int = 0
    error_message: str | None = None
    location: Location = Location()
    saving_to: tuple[CheckpointStorage, ...] = ()
    restoring_from: CheckpointRef | None = None
    awaiting_resources: bool = False
    """Created, but its resources depend on its config, which only user
    code can read: it cannot start until the shell reports them
    (`ResolveResources`, answered by `ResourcesUpdateRequested`)."""
    chained_behind: str | None = None
    """A waiting trial chained behind the running trial of this id
    (`ChainTrials`): it starts nowhere else while that one runs, and
    before any other waiting trial once it has ended."""
    exploited: Exploited | None = None
    """PBT's exploit since the trial's last persistent save (`Exploited`)."""
    unanalysed: tuple[str, ...] = ()
    """Numeric metrics of `last_result` that have no statistics (a restore
    made a checkpoint's metrics the last result): not in `metric_analysis`."""
    dirname: str | None = None
    """The name of the trial's directory, as the run that first started it
    recorded it (`TrialStarted.dirname`), when a `trial_dirname_creator`
    named it: a resume, a replay and the readers use it rather than asking
    the creator again. None for a default name (a pure function of the
    spec) and in logs written before it was recorded."""

    def __post_init__(self) -> None:
        """A finished trial keeps its last result packed (`recorded_result`),
        and its spec's config and evaluated params (`packed_spec`); any
        other has them as dicts (`unpacked_spec`: an ERROR trial
        restarted). On every state made, decoded or replaced, so a trial's
        state is the same however it was reached (a step, a replay, a
        snapshot)."""
        status, spec = self.status, self.spec
        if not (status is TrialStatus.TERMINATED or status is TrialStatus.ERROR):
            if type(_held_config(spec)) is PackedMap or type(_held_evaluated(spec)) is PackedMap:
                msgspec.structs.force_setattr(self, "spec", unpacked_spec(spec))
        else:
            finished = packed_spec(spec)
            if finished is not spec:
                msgspec.structs.force_setattr(self, "spec", finished)
            recorded, stats = self.recorded_result, self.recorded_stats
            if type(recorded) is dict:
                packed = pack(recorded) if recorded else _NONE_KEPT
                msgspec.structs.force_setattr(self, "recorded_result", packed)
            if type(stats) is dict:
                msgspec.structs.force_setattr(
                    self, "recorded_stats", pack(stats) if stats else _NONE_KEPT
                )

    @property
    def trial_id(self) -> str:
        return self.spec.trial_id

    @property
    def is_finished(self) -> bool:
        return self.status.is_finished

    @property
    def last_result(self) -> JsonDict:
        """The trial's last result, annotated as it was recorded; empty
        before its first. Of a finished trial, a new dict on every read:
        keep it rather than reading it per key."""
        recorded = self.recorded_result
        if type(recorded) is dict:
            return recorded if recorded is not _NONE_KEPT else {}
        return unpack(recorded)  # type: ignore[arg-type]

    @property
    def stats_beyond_last(self) -> dict[str, MetricStats]:
        """The stats `last_result` does not tell (`recorded_stats`)."""
        stats = self.recorded_stats
        if type(stats) is dict:
            return stats if stats is not _NONE_KEPT else {}
        return unpack_stats(stats)  # type: ignore[arg-type]

    @property
    def has_result(self) -> bool:
        """Whether the trial has recorded a result (without unpacking it)."""
        return bool(self.recorded_result)

    @property
    def metric_analysis(self) -> dict[str, MetricStats]:
        """Each numeric metric's max/min/avg/last over the trial's results
        (built on each read: keep it rather than reading it per metric)."""
        return whole(self.stats_beyond_last, self.unanalysed, flatten(self.last_result))

    def metric_stats(self, metric: str) -> MetricStats | None:
        """`metric_analysis.get(metric)`, without building the rest."""
        kept, last = self.stats_beyond_last, self.last_result
        return stats_of(metric, kept, self.unanalysed, flatten(last) if last else last)
