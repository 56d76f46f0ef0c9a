"""Ray Tune's `PlacementGroupFactory`, and a bundle in Ray's resource
names read as the core's `Resources`.

Apart from `resources.py` (which reads every form of request) so that the
trial's context (`worker.TrialContext.get_trial_resources`) can show its
resources in Ray's form without importing the class API.
"""

from __future__ import annotations

from collections.abc import Mapping

from tunecore.model import Resources
from tunecore.model.errors import InvalidFieldError
from tunecore.model.foreign_class import foreign_base
from tunecore.model.numbers import is_number
from tunecore.model.resources import STRATEGIES

_KNOWN = {"cpu": "cpu", "CPU": "cpu", "gpu": "gpu", "GPU": "gpu"}
_KNOWN.update(memory="memory", object_store_memory="object_store_memory")


class PlacementGroupFactory:
    """Ray Tune's multi-bundle request: the trial's worker runs in the first
    bundle; the others are reserved for the workers it starts itself, and
    placed by `strategy` (PACK, SPREAD, STRICT_PACK, STRICT_SPREAD). Keys
    are Ray's resource names (`CPU`, `GPU`, `memory`, custom ones). The
    trial starts only when every bundle can be reserved."""

    def __init__(self, bundles: list[dict[str, float]], strategy: str = "PACK") -> None:
        if not isinstance(bundles, list | tuple) or not bundles:  # type: ignore[redundant-expr, unused-ignore]
            raise ValueError(
                f"PlacementGroupFactory(bundles={bundles!r}) needs a non-empty list of dicts"
            )
        if strategy not in STRATEGIES:
            raise ValueError(
                f"PlacementGroupFactory(strategy={strategy!r}) is invalid: expected one of "
                f"{', '.join(STRATEGIES)}"
            )
        parsed = []
        for index, bundle in enumerate(bundles):
            if not isinstance(bundle, Mapping):
                raise ValueError(f"PlacementGroupFactory bundles[{index}]={bundle!r} is not a dict")
            parsed.append({str(k): float(v) for k, v in bundle.items() if v != 0})
        if not any(parsed):
            raise ValueError(
                f"PlacementGroupFactory(bundles={bundles!r}) asks for nothing: "
                "every bundle is empty"
            )
        self._bundles = parsed
        self._strategy = strategy
        self._resources = Resources(
            bundles=tuple(
                parse_bundle(bundle, f"PlacementGroupFactory bundles[{i}]")
                for i, bundle in enumerate(parsed)
            ),
            strategy=strategy,
        )

    @property
    def bundles(self) -> list[dict[str, float]]:
        return [dict(bundle) for bundle in self._bundles]

    @property
    def strategy(self) -> str:
        return self._strategy

    @property
    def head_bundle_is_empty(self) -> bool:
        return not self._bundles[0]

    @property
    def head_cpus(self) -> float:
        return self._bundles[0].get("CPU", self._bundles[0].get("cpu", 0.0))

    @property
    def required_resources(self) -> dict[str, float]:
        """The sum over the bundles."""
        total: dict[str, float] = {}
        for bundle in self._bundles:
            for name, amount in bundle.items():
                total[name] = total.get(name, 0.0) + amount
        return total

    @classmethod
    def of(cls, resources: Resources) -> PlacementGroupFactory:
        """The core's request as Ray shows a trial's (`Trial.placement_group_factory`,
        `get_trial_resources()`): its bundles, one for a plain request. A
        request of nothing (zero CPUs) is shown as one empty bundle, which
        the constructor refuses from users."""
        shown = cls.__new__(cls)
        parts = resources.bundles or (resources,)
        shown._bundles = [_bundle_of(part) for part in parts]
        shown._strategy = resources.strategy
        shown._resources = Resources(bundles=parts, strategy=resources.strategy)
        return shown

    def as_resources(self) -> Resources:
        """The core's form. A single bundle is a plain request (the same
        reservation without a placement group)."""
        if len(self._resources.bundles) == 1:
            return self._resources.bundles[0]
        return self._resources

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PlacementGroupFactory):
            return NotImplemented
        return self._bundles == other._bundles and self._strategy == other._strategy

    def __hash__(self) -> int:
        return hash((tuple(tuple(sorted(b.items())) for b in self._bundles), self._strategy))

    def __repr__(self) -> str:
        return f"PlacementGroupFactory({self._bundles!r}, strategy={self._strategy!r})"


def from_ray(request: object) -> object:
    """`request` as tunecore's `PlacementGroupFactory` when it is Ray's own
    (`ray.tune.PlacementGroupFactory`, or the `ray.air` `ResourceRequest`
    it subclasses); anything else unchanged. A library built on Ray Tune
    hands over Ray's class, in code the user's rewritten imports never
    reach: RLlib's `Algorithm.default_resource_request(config)` is what its
    Tune examples pass to `with_resources`. Ray's class is found by name in
    the object's MRO (tunecore never imports `ray.tune`) and read through
    its public properties; Ray drops an empty head bundle from `bundles`
    and says so in `head_bundle_is_empty`, so that bundle is put back."""
    if foreign_base(type(request), "ray.air.execution", ("ResourceRequest",)) is None:
        return request
    bundles: list[dict[str, float]] = list(request.bundles)  # type: ignore[attr-defined]
    if request.head_bundle_is_empty:  # type: ignore[attr-defined]
        bundles.insert(0, {})
    return PlacementGroupFactory(bundles, strategy=request.strategy)  # type: ignore[attr-defined]


def _bundle_of(part: Resources) -> dict[str, float]:
    """One bundle in Ray's resource names, without zero amounts."""
    amounts = {"CPU": part.cpu, "GPU": part.gpu, "memory": part.memory}
    amounts["object_store_memory"] = part.object_store_memory
    amounts.update(part.custom)
    return {name: amount for name, amount in amounts.items() if amount}


def parse_bundle(bundle: Mapping[str, object], field: str) -> Resources:
    """A bundle (or a resources dict) as `Resources`: Ray's names for CPUs,
    GPUs and memory, anything else a custom resource."""
    amounts: dict[str, float] = {}
    custom: dict[str, float] = {}
    for name, amount in bundle.items():
        if not is_number(amount) or amount < 0:
            raise InvalidFieldError(f"{field}[{name!r}]", amount, "a number >= 0")
        if name in _KNOWN:
            amounts[_KNOWN[name]] = float(amount)
        else:
            custom[name] = float(amount)
    return Resources(
        cpu=amounts.get("cpu", 0.0),
        gpu=amounts.get("gpu", 0.0),
        memory=amounts.get("memory", 0.0),
        object_store_memory=amounts.get("object_store_memory", 0.0),
        custom=custom,
    )
