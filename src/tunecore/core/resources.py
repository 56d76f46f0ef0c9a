"""Resource accounting: what is free, what fits, and what never can.

Amounts are floats (Ray allows fractional CPUs and GPUs). Sums and
differences are rounded to 1e-9 so that, for example, ten 0.1-CPU trials
starting and stopping never leave -2.7e-17 CPUs free; with that rounding the
experiment's `used` never exceeds the cluster total.
"""

from __future__ import annotations

from tunecore.model import Resources

_NO_RESOURCES = Resources(cpu=0.0, gpu=0.0)


def _round(value: float) -> float:
    return max(round(value, 9), 0.0)


def nothing() -> Resources:
    return _NO_RESOURCES


def add(a: Resources, b: Resources) -> Resources:
    custom = dict(a.custom)
    for name, amount in b.custom.items():
        custom[name] = _round(custom.get(name, 0.0) + amount)
    return Resources(cpu=_round(a.cpu + b.cpu), gpu=_round(a.gpu + b.gpu), custom=custom)


def subtract(a: Resources, b: Resources) -> Resources:
    """`a - b`, clamped at zero (b is always part of a here)."""
    custom = {name: _round(amount - b.custom.get(name, 0.0)) for name, amount in a.custom.items()}
    return Resources(cpu=_round(a.cpu - b.cpu), gpu=_round(a.gpu - b.gpu), custom=custom)


def fits(request: Resources, free: Resources) -> bool:
    """Whether `request` fits in `free`, resource by resource."""
    if request.cpu > free.cpu + 1e-9 or request.gpu > free.gpu + 1e-9:
        return False
    return all(
        amount <= free.custom.get(name, 0.0) + 1e-9 for name, amount in request.custom.items()
    )


def insufficient_message(request: Resources, total: Resources) -> str:
    """Why a trial can never start on this cluster: what it asks, what exists."""
    return (
        "Insufficient cluster resources to launch trial: the trial requested "
        f"{request.summary()} but the whole cluster has {total.summary()}. "
        "Lower the trial's resources (resources_per_trial) or add nodes to the cluster."
    )
