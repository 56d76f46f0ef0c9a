"""What a trial asks of the cluster, and what the cluster has."""

from __future__ import annotations

import math

import msgspec

from tunecore.model.errors import (
    InvalidFieldError,
    float_valued,
    floats_as_decoded,
    require_finite_non_negative,
    require_name,
)

STRATEGIES = ("PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD")
"""Ray's placement strategies for a request made of bundles."""

_AMOUNTS = ("cpu", "gpu", "memory", "object_store_memory")


class Resources(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """CPUs, GPUs, memory and object store memory (bytes, as Ray counts
    them) and named custom resources (fractions allowed, as in Ray).

    `bundles` makes a request a placement group (Ray's
    `PlacementGroupFactory`): the trial's worker runs in the first bundle,
    the others are reserved for what it starts, placed by `strategy`. The
    amounts are then the bundles' sum, which is what the trial holds. For a
    cluster's total, `bundles` are its nodes, when known: a bundle no node
    can hold never fits, even if the total could.

    Invariant: every amount is a finite number >= 0. The check runs on
    construction and on decoding, so no code path can carry a negative or NaN
    request into resource accounting.
    """

    cpu: float = 1.0
    gpu: float = 0.0
    memory: float = 0.0
    object_store_memory: float = 0.0
    custom: dict[str, float] = {}
    bundles: tuple[Resources, ...] = ()
    strategy: str = "PACK"

    def __post_init__(self) -> None:
        if self._plain_amounts():
            return
        for amount in _AMOUNTS:
            require_finite_non_negative(f"Resources.{amount}", getattr(self, amount))
        custom: object = self.custom
        if not isinstance(custom, dict):
            raise InvalidFieldError("Resources.custom", custom, "a dict of name -> amount")
        for name, amount in custom.items():
            require_name("Resources.custom (a resource name)", name)
            require_finite_non_negative(f"Resources.custom[{name!r}]", amount)
        if self.strategy not in STRATEGIES:
            raise InvalidFieldError("Resources.strategy", self.strategy, f"one of {STRATEGIES}")
        floats_as_decoded(self, *_AMOUNTS)
        msgspec.structs.force_setattr(self, "custom", float_valued(self.custom))
        if self.bundles:
            self._take_bundle_sums()

    def _plain_amounts(self) -> bool:
        """The common case, which the checks below would leave as it is:
        four finite float amounts >= 0, no custom resources, no bundles, the
        default strategy. (Resource accounting makes one of these at every
        start and end of a trial.)"""
        return (
            type(self.cpu) is float
            and type(self.gpu) is float
            and type(self.memory) is float
            and type(self.object_store_memory) is float
            and 0.0 <= self.cpu < math.inf
            and 0.0 <= self.gpu < math.inf
            and 0.0 <= self.memory < math.inf
            and 0.0 <= self.object_store_memory < math.inf
            and not self.custom
            and type(self.custom) is dict
            and not self.bundles
            and self.strategy == "PACK"
        )

    def _take_bundle_sums(self) -> None:
        for bundle in self.bundles:
            if bundle.bundles:
                raise InvalidFieldError("Resources.bundles", bundle, "bundles without bundles")
        for amount in _AMOUNTS:
            total = round(sum(getattr(bundle, amount) for bundle in self.bundles), 9)
            msgspec.structs.force_setattr(self, amount, total)
        custom: dict[str, float] = {}
        for bundle in self.bundles:
            for name, value in bundle.custom.items():
                custom[name] = round(custom.get(name, 0.0) + value, 9)
        msgspec.structs.force_setattr(self, "custom", custom)

    def summary(self) -> str:
        """A short human form such as `2 CPUs, 1 GPUs, 1 accelerator_x`."""
        parts = [f"{self.cpu:g} CPUs", f"{self.gpu:g} GPUs"]
        if self.memory:
            parts.append(f"{_bytes(self.memory)} memory")
        if self.object_store_memory:
            parts.append(f"{_bytes(self.object_store_memory)} object store memory")
        parts += [f"{amount:g} {name}" for name, amount in sorted(self.custom.items())]
        if self.bundles:
            parts.append(f"in {len(self.bundles)} bundles ({self.strategy})")
        return ", ".join(parts)


def _bytes(amount: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if amount < 1024:
            return f"{amount:.4g} {unit}"
        amount /= 1024
    return f"{amount:.4g} TiB"
