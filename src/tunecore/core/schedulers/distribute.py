"""How `ResourceChangingScheduler` resizes a trial: Ray Tune's two built-in
resource allocation functions, as pure data, and the place of a user's own.

`DistributeResources` spreads the cluster's CPUs and GPUs evenly over the
live trials; `DistributeResourcesToTopJob` gives what is free to the best
trial. Both are Ray Tune 2.60's algorithms step for step (the same float
arithmetic, the same bundle lists, the same quirks: a trial without the
metric ranks first under `mode="max"`, a single-bundle request keeps only
its CPUs and GPUs), computed from what the core holds: the trial, its
result, the live trials, the first trial's resources and the cluster's
total. So they run in the core, and replay and resume decide exactly as the
run did without any code of the user's.

A user's `resources_allocation_function` is code: the scheduler keeps only
its place (`AllocationFunction`), the shell calls it, and its answer is
logged on the result (`ResultReported.allocation`).

A request is handled here as Ray handles it, as a list of bundles (dicts
of Ray's resource names), and turned back into the core's `Resources` at
the end (`as_resources`: one bundle is a plain request).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, Self

import msgspec

from tunecore.core.results import TRAINING_ITERATION
from tunecore.model import InvalidFieldError, JsonDict, Mode, ModeArg, Resources, TrialState
from tunecore.model.errors import coerce_enum, require_int, require_name
from tunecore.model.numbers import is_number

Bundle = dict[str, float]

_DEFAULT_BASE = Resources(cpu=1.0, gpu=0.0)
"""Ray's base when no trial was seen yet: one CPU."""

_AMOUNTS: tuple[tuple[str, str], ...] = (
    ("CPU", "cpu"),
    ("GPU", "gpu"),
    ("memory", "memory"),
    ("object_store_memory", "object_store_memory"),
)
"""Ray's resource names with the `Resources` fields they fill."""


def bundles_of(resources: Resources) -> list[Bundle]:
    """`resources` as the bundle list Ray's `PlacementGroupFactory.bundles`
    shows: zero amounts left out, an empty head bundle too (see
    `head_is_empty`); one bundle for a plain request."""
    bundles = [_bundle(part) for part in resources.bundles or (resources,)]
    return bundles[1:] if head_is_empty(resources) else bundles


def head_is_empty(resources: Resources) -> bool:
    """Whether the trial itself runs in an empty first bundle, the others
    being reserved for what it starts (a `ScalingConfig`'s layout)."""
    return len(resources.bundles) > 1 and not any(_bundle(resources.bundles[0]).values())


def _bundle(part: Resources) -> Bundle:
    bundle = {name: getattr(part, field) for name, field in _AMOUNTS}
    bundle.update(part.custom)
    return {name: float(amount) for name, amount in bundle.items() if amount}


def as_resources(bundles: Sequence[Mapping[str, float]], strategy: str) -> Resources:
    """The core's request for Ray's bundle list: one bundle is a plain
    request, several a placement group placed by `strategy`."""
    parts = tuple(_part(bundle) for bundle in bundles)
    if len(parts) == 1:
        return parts[0]
    return Resources(bundles=parts, strategy=strategy)


def _part(bundle: Mapping[str, float]) -> Resources:
    known = dict(_AMOUNTS)
    custom = {name: float(v) for name, v in bundle.items() if name not in known and v}
    return Resources(
        cpu=float(bundle.get("CPU", 0.0)),
        gpu=float(bundle.get("GPU", 0.0)),
        memory=float(bundle.get("memory", 0.0)),
        object_store_memory=float(bundle.get("object_store_memory", 0.0)),
        custom=custom,
    )


def _cpu(bundle: Mapping[str, float]) -> float:
    return bundle.get("CPU", 0)


def _gpu(bundle: Mapping[str, float]) -> float:
    return bundle.get("GPU", 0)


def _summed(bundles: Sequence[Mapping[str, float]]) -> Bundle:
    """Each resource summed over `bundles` (Ray's `_sum_bundles`)."""
    if not bundles:
        return {"CPU": 0, "GPU": 0}
    total: Bundle = {}
    for bundle in bundles:
        for name, amount in bundle.items():
            total[name] = total.get(name, 0) + amount
    return total


class Pool(NamedTuple):
    """What an allocation is computed from besides the trial and its
    result: the live trials (not finished) in trial id order, the first
    trial's resources (None before any trial: Ray's default of one CPU),
    and the cluster's total. Never stored."""

    live: tuple[TrialState, ...]
    base: Resources | None
    total: Resources


class DistributeResources(msgspec.Struct, frozen=True, tag=True):
    """Ray Tune's default allocation: the cluster's CPUs and GPUs, less
    `reserve_resources`, spread evenly over the live trials, each trial
    growing in steps of `increase_by` (1 CPU, or 1 GPU when the base asks
    for GPUs; the base's last bundle with `add_bundles`) at most
    `increase_by_times` times (< 1: no limit), never below the first
    trial's resources. `add_bundles` grows a placement group by whole
    bundles instead of growing its one bundle."""

    add_bundles: bool = False
    increase_by: dict[str, float] | None = None
    increase_by_times: int = -1
    reserve_resources: dict[str, float] | None = None

    def __post_init__(self) -> None:
        owner = type(self).__name__
        if not isinstance(self.add_bundles, bool):
            raise InvalidFieldError(f"{owner}.add_bundles", self.add_bundles, "True or False")
        require_int(f"{owner}.increase_by_times", self.increase_by_times)
        for field in ("increase_by", "reserve_resources"):
            amounts: object = getattr(self, field)
            if amounts is None:
                continue
            if not isinstance(amounts, dict):
                raise InvalidFieldError(f"{owner}.{field}", amounts, "a dict of name -> amount")
            for name, amount in amounts.items():
                require_name(f"{owner}.{field} (a resource name)", name)
                if not is_number(amount) or not 0 <= amount < math.inf:
                    raise InvalidFieldError(f"{owner}.{field}[{name!r}]", amount, "a number >= 0")
            msgspec.structs.force_setattr(self, field, {k: float(v) for k, v in amounts.items()})
        if self.increase_by and not (_cpu(self.increase_by) or _gpu(self.increase_by)):
            raise InvalidFieldError(
                f"{owner}.increase_by", self.increase_by, "a dict with a CPU or GPU amount > 0"
            )

    # -- Ray's steps, by their names there ------------------------------------

    @property
    def _increase_by(self) -> Bundle:
        return self.increase_by or {}

    def _is_bundle_empty(self, bundle: Mapping[str, float]) -> bool:
        return not (_cpu(bundle) or _gpu(bundle))

    def _add_two_bundles(
        self,
        bundles_a: list[Bundle],
        bundles_b: list[Bundle],
        increase_by: Bundle,
        limit_to_increase_by_times: bool,
        max_increase_by_times: int = -1,
    ) -> list[Bundle]:
        times = self.increase_by_times
        if limit_to_increase_by_times:
            if max_increase_by_times > 0 and times > 0:
                max_increase_by_times = min(max_increase_by_times, times)
            elif times > 0:
                max_increase_by_times = times
        if self.add_bundles:
            bundles = [b for b in bundles_a if not self._is_bundle_empty(b)]
            bundles += [b for b in bundles_b if not self._is_bundle_empty(b)]
            if max_increase_by_times > 0:
                bundles = bundles[:max_increase_by_times]
            return bundles
        first_a = (bundles_a or [{}])[0]
        first_b = (bundles_b or [{}])[0]
        bundle = {"CPU": _cpu(first_a) + _cpu(first_b), "GPU": _gpu(first_a) + _gpu(first_b)}
        if max_increase_by_times > 0:
            bundle["CPU"] = min(bundle["CPU"], _cpu(increase_by) * max_increase_by_times)
            bundle["GPU"] = min(bundle["GPU"], _gpu(increase_by) * max_increase_by_times)
        return [bundle]

    def _get_multiplier(
        self, increase_by: Bundle, cpus: float = 0, gpus: float = 0, max_multiplier: int = -1
    ) -> int:
        if _cpu(increase_by) and _gpu(increase_by):
            multiplier = min(cpus // _cpu(increase_by), gpus // _gpu(increase_by))
        elif _gpu(increase_by):
            multiplier = gpus // _gpu(increase_by)
        else:
            multiplier = cpus // _cpu(increase_by)
        if max_multiplier > 0 and multiplier > 0:
            multiplier = min(max_multiplier, multiplier)
        return int(multiplier)

    def _remove_bundles(
        self, bundles: list[Bundle], increase_by: Bundle, multiplier: int
    ) -> list[Bundle]:
        multiplier = -abs(multiplier)
        if self.add_bundles:
            return bundles[:multiplier]
        bundles = copy.deepcopy(bundles)
        first = bundles[0]
        first["CPU"] = max(_cpu(first) + _cpu(increase_by) * multiplier, 0)
        first["GPU"] = max(_gpu(first) + _gpu(increase_by) * multiplier, 0)
        return bundles

    def _create_new_bundles(self, increase_by: Bundle, multiplier: int) -> list[Bundle]:
        multiplier = abs(multiplier)
        if self.add_bundles:
            return [dict(increase_by) for _ in range(multiplier)]
        return [{"CPU": _cpu(increase_by) * multiplier, "GPU": _gpu(increase_by) * multiplier}]

    def _modify_bundles_with_free_resources(
        self,
        bundles: list[Bundle],
        increase_by: Bundle,
        free_cpus: float,
        free_gpus: float,
        *,
        max_multiplier: int = -1,
        max_increase_by_times: int = -1,
    ) -> list[Bundle]:
        multiplier = self._get_multiplier(increase_by, free_cpus, free_gpus, max_multiplier)
        if multiplier < 0:
            return self._remove_bundles(bundles, increase_by, multiplier)
        if multiplier > 0:
            added = self._create_new_bundles(increase_by, multiplier)
            return self._add_two_bundles(bundles, added, increase_by, True, max_increase_by_times)
        return bundles

    def _get_added_bundles(self, bundles: list[Bundle], base_bundles: list[Bundle]) -> list[Bundle]:
        if self.add_bundles:
            return bundles[len(base_bundles) :]
        first = (bundles or [{"CPU": 0, "GPU": 0}])[0]
        base = (base_bundles or [{"CPU": 0, "GPU": 0}])[0]
        return [{"CPU": _cpu(first) - _cpu(base), "GPU": _gpu(first) - _gpu(base)}]

    def _are_bundles_below_limit(
        self, bundles: list[Bundle], base_bundles: list[Bundle] | None = None
    ) -> bool:
        times = self.increase_by_times
        max_cpus = _cpu(self._increase_by) * times if times > 0 else math.inf
        max_gpus = _gpu(self._increase_by) * times if times > 0 else math.inf
        added = _summed(self._get_added_bundles(bundles, base_bundles) if base_bundles else bundles)
        return added.get("CPU", -math.inf) < max_cpus or added.get("GPU", -math.inf) < max_gpus

    def _get_new_added_bundles(
        self,
        trial: TrialState,
        all_trials: Sequence[TrialState],
        base_bundles: list[Bundle],
        increase_by: Bundle,
        *,
        total: tuple[float, float],
        used: tuple[float, float],
    ) -> list[Bundle]:
        """Ray's even split: a clean slate is simulated, one step per trial
        in turn, to find how many steps the first trial would get
        (`max_increase_by_times`); the trial grows (or shrinks) by what is
        free, up to that."""
        free_cpus, free_gpus = total[0] - used[0], total[1] - used[1]
        slate: list[list[Bundle]] = [[] for _ in all_trials]
        base = _summed(base_bundles)
        left_cpus = total[0] - base.get("CPU", 0) * len(all_trials)
        left_gpus = total[1] - base.get("GPU", 0) * len(all_trials)
        max_increase_by_times = 0
        index = 0
        at_limit: set[int] = set()
        while (
            len(at_limit) < len(all_trials)
            and left_cpus >= _cpu(increase_by)
            and left_gpus >= _gpu(increase_by)
        ):
            slot = index % len(slate)
            old = copy.deepcopy(slate[slot])
            slate[slot] = self._modify_bundles_with_free_resources(
                slate[slot], increase_by, left_cpus, left_gpus, max_multiplier=1
            )
            added = _summed(self._get_added_bundles(slate[slot], old))
            if not added.get("CPU", 0) and not added.get("GPU", 0):
                at_limit.add(slot)
            elif slot == 0:
                max_increase_by_times += 1
            left_cpus -= added.get("CPU", 0)
            left_gpus -= added.get("GPU", 0)
            index += 1
        return self._modify_bundles_with_free_resources(
            self._get_added_bundles(bundles_of(trial.spec.resources), base_bundles),
            increase_by,
            free_cpus,
            free_gpus,
            max_increase_by_times=max_increase_by_times,
        )

    # -- the allocation -------------------------------------------------------

    def check_base(self, owner: str, base: Resources) -> None:
        """Ray's `_validate`: without `add_bundles`, the trials' request
        must be a single bundle."""
        count = len(bundles_of(base))
        if not self.add_bundles and count > 1:
            raise InvalidFieldError(
                f"{owner}.base_trial_resources",
                base.summary(),
                f"a single bundle when {type(self).__name__}.add_bundles is False "
                f"(got {count} bundles)",
            )

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Nothing to take: only the top-job allocation ranks trials."""
        del metric, mode
        return self

    def allocate(self, trial: TrialState, result: JsonDict, pool: Pool) -> Resources | None:
        """The trial's new request after `result` (Ray's `__call__`), or
        None before its first iteration."""
        iteration = result.get(TRAINING_ITERATION, 0)
        if not is_number(iteration) or iteration < 1:
            return None
        base = pool.base if pool.base is not None else _DEFAULT_BASE
        base_bundles = bundles_of(base)
        increase_by = self._default_increase(base_bundles)
        reserve = self.reserve_resources or {}
        total = (pool.total.cpu - _cpu(reserve), pool.total.gpu - _gpu(reserve))
        used = (
            sum(t.spec.resources.cpu for t in pool.live),
            sum(t.spec.resources.gpu for t in pool.live),
        )
        added = self._get_new_added_bundles(
            trial, pool.live, base_bundles, increase_by, total=total, used=used
        )
        bundles = self._add_two_bundles(base_bundles, added, increase_by, False)
        bundles = [{name: v for name, v in b.items() if v} for b in bundles]
        if not any(bundles):
            return None  # Ray's placement group refuses a request of nothing
        if head_is_empty(base):
            bundles = [{}, *bundles]  # as Ray keeps `_head_bundle_is_empty`
        return as_resources(bundles, base.strategy)

    def _default_increase(self, base_bundles: list[Bundle]) -> Bundle:
        if self.increase_by:
            return self.increase_by
        if self.add_bundles:
            return base_bundles[-1]
        if _gpu(base_bundles[0]):
            return {"GPU": 1}
        return {"CPU": 1}


class DistributeResourcesToTopJob(DistributeResources, frozen=True, tag=True):
    """Ray Tune's top-job allocation: what is free goes to the best trial by
    `metric` and `mode` (its own, else the base scheduler's, else the
    experiment's), among those not yet at their `increase_by_times` limit;
    the others keep what they have unless the cluster is over-committed.
    Trials are ranked by their last result before this one."""

    metric: str | None = None
    mode: ModeArg | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = type(self).__name__
        if self.metric is not None:
            require_name(f"{owner}.metric", self.metric)
        if self.mode is not None:
            coerce_enum(self, "mode", Mode)

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Its own metric and mode where set, else these; it cannot rank
        trials without both (Ray fails on the first result; here, before
        the first trial)."""
        owner = type(self).__name__
        chosen_metric = self.metric if self.metric is not None else metric
        chosen_mode = self.mode if self.mode is not None else mode
        if chosen_metric is None:
            raise InvalidFieldError(
                f"{owner}.metric",
                None,
                "a metric name, set in DistributeResourcesToTopJob, the base scheduler "
                "or TuneConfig",
            )
        if chosen_mode is None:
            raise InvalidFieldError(f"{owner}.mode", None, "'min' or 'max' (here or in TuneConfig)")
        return msgspec.structs.replace(self, metric=chosen_metric, mode=Mode(chosen_mode))

    def _get_new_added_bundles(
        self,
        trial: TrialState,
        all_trials: Sequence[TrialState],
        base_bundles: list[Bundle],
        increase_by: Bundle,
        *,
        total: tuple[float, float],
        used: tuple[float, float],
    ) -> list[Bundle]:
        free_cpus, free_gpus = total[0] - used[0], total[1] - used[1]
        ranked = sorted(all_trials, key=self._rank_key)
        added = self._get_added_bundles(bundles_of(trial.spec.resources), base_bundles)
        best = next(
            (
                t
                for t in ranked
                if self._are_bundles_below_limit(bundles_of(t.spec.resources), base_bundles)
            ),
            ranked[0],
        )
        if (
            trial.trial_id != best.trial_id
            and self._get_multiplier(increase_by, free_cpus, free_gpus) >= 0
        ):
            return added  # only the best grows; the others shrink only when over-committed
        return self._modify_bundles_with_free_resources(added, increase_by, free_cpus, free_gpus)

    def _rank_key(self, trial: TrialState) -> float:
        """Ray's sort key: best first; a trial without the metric counts as
        +inf (first under max, last under min)."""
        value = trial.last_result.get(self.metric or "", math.inf)
        score = float(value) if is_number(value) else math.inf
        return -score if self.mode is Mode.MAX else score


class AllocationFunction(msgspec.Struct, frozen=True, tag=True, dict=True):
    """The place of a user's `resources_allocation_function`: its name is
    data; the function itself is kept beside the fields (`func`, never
    encoded) for the shell, which calls it and logs its answers."""

    name: str = ""

    @property
    def func(self) -> Callable[..., object] | None:
        found: Callable[..., object] | None = self.__dict__.get("func")
        return found


def function_place(func: Callable[..., object]) -> AllocationFunction:
    place = AllocationFunction(getattr(func, "__name__", type(func).__name__))
    place.__dict__["func"] = func
    return place


Allocation = DistributeResources | DistributeResourcesToTopJob | AllocationFunction
"""What decides a trial's new resources: a built-in allocation (pure, in
the core) or the place of the user's function (in the shell)."""
