"""Population Based Bandits (PB2; Parker-Holder et al. 2020), as Ray Tune
implements it: PBT whose explore step chooses the new hyperparameters by
GP-UCB within `hyperparam_bounds` instead of perturbing them at random.

Theory of operation: everything but the explore step is PBT's (ranking,
quantiles, checkpoints, donors, taking turns; `core.schedulers.pbt`). At
each perturbation a trial's score is noted as an `Observation` (its time,
its hyperparameters, its score). When a trial exploits a donor, the
observations become rows: per trial and hyperparameter values, in time
order, each row after the first gives the change in score per unit of
time, with the time and the score before it (`reward_changes`). The model
(`core.schedulers.pb2_model`) fits them and picks the values with the
highest upper confidence bound at the donor's newest time and score. The
exploiting trial is then noted at the donor's time and score with its new
values, so its next perturbation measures the change they made. Values a
trial took since the newest time seen (`taken`) make the model spread the
round's choices.

Invariants:

- `hyperparam_bounds` holds `(low, high)` floats by '/'-joined path, low
  <= high, and PBT's `hyperparam_mutations` holds the same paths (as
  `[low, high]`), which makes the perturbed tag list them as Ray's does.
- A chosen value lies within its bounds; an int donor value stays an int
  (truncated, as Ray's `int()`), any other is a float.
- `observations` are in the order noted, the newest `MAX_OBSERVATIONS`
  only; an observation is noted only when every bounded value of the
  trial is a finite number (Ray fails on others).
- All randomness (the donor, the model's candidates) is drawn from `rng`,
  so the same seed and the same events give the same configs, also after a
  msgpack round trip.

Deviations from Ray: those of PBT (see its module) and of the model (see
`pb2_model`). `synch=True` and `custom_explore_fn` work as PBT's (the
barrier, and the user's function asked through the shell with the config
the model chose); `log_config` writes Ray's policy files as PBT's does, and
`require_attrs`
is accepted and changes nothing: a result without the metric fails its
trial as with every policy. A donor with no reward change yet passes its
config on unchanged, as in Ray.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Self, cast

import msgspec
import numpy as np

from tunecore.core.rng import Rng
from tunecore.core.schedulers import pb2_model
from tunecore.core.schedulers.base import evolve
from tunecore.core.schedulers.pbt import (
    PopulationBasedTraining,
    PopulationMember,
    assign,
    flatten_nested,
    lookup,
)
from tunecore.model import InvalidFieldError, JsonDict, JsonValue
from tunecore.model.numbers import is_finite_number, is_int

_BOUNDS = "PB2.hyperparam_bounds"

MAX_OBSERVATIONS = 1000
"""Observations kept (the newest): the model fits at most the newest
`pb2_model.WINDOW` reward changes, and a cap keeps snapshots small."""

_PBT_ONLY = {"resample_probability": 0.25, "perturbation_factors": (1.2, 0.8)}
"""PBT's random-perturbation settings, which PB2 does not take (Ray's PB2
has no such argument), with PBT's defaults."""


class Observation(msgspec.Struct, frozen=True, array_like=True):
    """A trial at one of its perturbations: its time, its values of the
    bounded hyperparameters (in the order of `hyperparam_bounds`) and its
    signed score (greater is better)."""

    trial_id: str
    time: float
    values: tuple[float, ...]
    score: float


class PB2(PopulationBasedTraining, frozen=True, kw_only=True, tag=True, omit_defaults=True):
    """Population Based Bandits: PBT exploring by GP-UCB (module docstring).

    Configuration as Ray's `PB2`: `time_attr`, `metric`, `mode`,
    `perturbation_interval`, `hyperparam_bounds` (`{"lr": [1e-4, 1e-1]}`,
    nested dicts allowed), `quantile_fraction`, `log_config`,
    `require_attrs`, `synch`, `custom_explore_fn` (called with the config
    the model chose, as Ray's PB2 calls it), and tunecore's `seed`,
    `burn_in_period` and `take_turns` (PBT's). State: PBT's,
    `observations`, and the values `taken` this round, which started at
    `round_time`.
    """

    if TYPE_CHECKING:
        hyperparam_bounds: Mapping[str, object] = {}
    else:
        hyperparam_bounds: dict[str, tuple[float, float]] = {}
    observations: tuple[Observation, ...] = ()
    taken: tuple[tuple[float, ...], ...] = ()
    round_time: float = 0.0

    def __post_init__(self) -> None:
        for name, default in _PBT_ONLY.items():
            if getattr(self, name) != default:
                raise TypeError(f"PB2 takes no {name} (PopulationBasedTraining's)")
        bounds = flatten_bounds(self.hyperparam_bounds)
        mutations = {path: [low, high] for path, (low, high) in bounds.items()}
        given = self.hyperparam_mutations
        if given and dict(given) != mutations:
            raise TypeError("PB2 takes hyperparam_bounds, not hyperparam_mutations")
        msgspec.structs.force_setattr(self, "hyperparam_bounds", bounds)
        msgspec.structs.force_setattr(self, "hyperparam_mutations", mutations)
        super().__post_init__()

    def _scored(self, trial_id: str, member: PopulationMember) -> Self:
        """Note the trial's score with its current values (see Invariants)."""
        assert member.last_score is not None  # just scored
        values = self._values(member.config)
        if values is None:
            return self
        seen = Observation(trial_id, member.last_perturbation_time, values, member.last_score)
        return evolve(self, observations=_kept((*self.observations, seen)))

    def _explored(
        self, trial_id: str, donor_id: str, donor_config: JsonDict, rng: Rng
    ) -> tuple[Self, Rng, JsonDict]:
        """The donor's config with the model's choice of the bounded values,
        and the exploiting trial noted at the donor's time and score."""
        config: JsonDict = copy.deepcopy(donor_config)
        rows = reward_changes(self.observations)[-pb2_model.WINDOW :]
        base = next((row for row in reversed(rows) if row.trial_id == donor_id), None)
        if base is None:
            return self, rng, config
        newest = max(seen.time for seen in self.observations)
        taken = self.taken if newest <= self.round_time else ()
        lows = np.array([low for low, _ in self._bounds()])
        highs = np.array([high for _, high in self._bounds()])
        unit_values = [pb2_model.normalize(np.array(row.values), lows, highs) for row in rows]
        rng, unit = pb2_model.choose(
            np.array(
                [(row.time, row.before, *unit) for row, unit in zip(rows, unit_values, strict=True)]
            ),
            np.array([row.change for row in rows]),
            (base.time, base.before),
            pb2_model.normalize(np.array(taken).reshape(-1, len(lows)), lows, highs),
            rng,
        )
        values = []
        for path, value in zip(self.hyperparam_bounds, lows + unit * (highs - lows), strict=True):
            keys = path.split("/")
            new = _typed(lookup(donor_config, keys)[1], float(value))
            assign(config, keys, new)
            values.append(float(new))  # as decoding reads it: a resume encodes the same bytes
        seen = Observation(trial_id, base.time, tuple(values), base.score)
        policy = evolve(
            self,
            observations=_kept((*self.observations, seen)),
            taken=(*taken, seen.values),
            round_time=max(newest, seen.time),
        )
        return policy, rng, config

    def debug_string(self) -> str:
        return (
            f"PB2: {self.num_checkpoints} checkpoints, {self.num_perturbations} perturbs, "
            f"{len(self.observations)} observations"
        )

    def _bounds(self) -> list[tuple[float, float]]:
        """`hyperparam_bounds` (which construction flattened) in path order."""
        bounds = cast(dict[str, tuple[float, float]], self.hyperparam_bounds)
        return list(bounds.values())

    def _values(self, config: JsonDict) -> tuple[float, ...] | None:
        values = []
        for path in self.hyperparam_bounds:
            value = lookup(config, path.split("/"))[1]
            if not is_finite_number(value):
                return None
            values.append(float(value))
        return tuple(values)


class RewardChange(NamedTuple):
    """One row the model fits (derived, never stored): the change in score
    per unit of time from a trial's previous observation with the same
    values to this one."""

    trial_id: str
    time: float
    before: float
    values: tuple[float, ...]
    change: float
    score: float


def reward_changes(observations: Sequence[Observation]) -> list[RewardChange]:
    """Ray's rows: observations in time order (a stable sort: ties keep the
    order noted), each paired with the previous one of the same trial and
    values; pairs whose time did not advance are dropped."""
    ordered = sorted(observations, key=lambda seen: seen.time)
    previous: dict[tuple[str, tuple[float, ...]], Observation] = {}
    rows = []
    for seen in ordered:
        key = (seen.trial_id, seen.values)
        last = previous.get(key)
        previous[key] = seen
        if last is None or seen.time <= last.time:
            continue
        change = (seen.score - last.score) / (seen.time - last.time)
        rows.append(
            RewardChange(seen.trial_id, seen.time, last.score, seen.values, change, seen.score)
        )
    return rows


def flatten_bounds(bounds: Mapping[str, object]) -> dict[str, tuple[float, float]]:
    """`(low, high)` floats by '/'-joined path, checked: each leaf a list or
    tuple of two finite numbers with low <= high. Idempotent."""
    given: object = bounds
    if not isinstance(given, Mapping) or not given:
        raise InvalidFieldError(_BOUNDS, given, "a non-empty dict of [low, high] bounds")
    return flatten_nested(given, _BOUNDS, "bounds", "bound", _checked_bound)


def _checked_bound(field: str, value: object) -> tuple[float, float]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(is_finite_number(side) for side in value)
    ):
        raise InvalidFieldError(field, value, "[low, high]: a list of two finite numbers")
    low, high = float(value[0]), float(value[1])
    if low > high:
        raise InvalidFieldError(field, value, "[low, high] with low <= high")
    return low, high


def _kept(observations: tuple[Observation, ...]) -> tuple[Observation, ...]:
    return observations[-MAX_OBSERVATIONS:]


def _typed(old: JsonValue, value: float) -> float:
    """`value` as the type of the donor's `old` value: Ray casts with
    `type(old)`; an int is truncated, anything else is a float."""
    return int(value) if is_int(old) else value  # an int is a float to the checker
