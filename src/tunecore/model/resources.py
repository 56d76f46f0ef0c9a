"""What a trial asks of the cluster, and what the cluster has."""

from __future__ import annotations

import msgspec

from tunecore.model.errors import (
    InvalidFieldError,
    float_valued,
    floats_as_decoded,
    require_finite_non_negative,
    require_name,
)


class Resources(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """CPUs, GPUs and named custom resources (fractions allowed, as in Ray).

    Invariant: every amount is a finite number >= 0. The check runs on
    construction and on decoding, so no code path can carry a negative or NaN
    request into resource accounting.
    """

    cpu: float = 1.0
    gpu: float = 0.0
    custom: dict[str, float] = {}

    def __post_init__(self) -> None:
        require_finite_non_negative("Resources.cpu", self.cpu)
        require_finite_non_negative("Resources.gpu", self.gpu)
        custom: object = self.custom
        if not isinstance(custom, dict):
            raise InvalidFieldError("Resources.custom", custom, "a dict of name -> amount")
        for name, amount in custom.items():
            require_name("Resources.custom (a resource name)", name)
            require_finite_non_negative(f"Resources.custom[{name!r}]", amount)
        floats_as_decoded(self, "cpu", "gpu")
        msgspec.structs.force_setattr(self, "custom", float_valued(self.custom))

    def summary(self) -> str:
        """A short human form such as `2 CPUs, 1 GPUs, 1 accelerator_x`."""
        parts = [f"{self.cpu:g} CPUs", f"{self.gpu:g} GPUs"]
        parts += [f"{amount:g} {name}" for name, amount in sorted(self.custom.items())]
        return ", ".join(parts)
