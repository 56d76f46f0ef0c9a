"""Resource accounting: what is free, what fits, and what never can.

Amounts are floats (Ray allows fractional CPUs and GPUs). Sums and
differences are rounded to 1e-9 so that, for example, ten 0.1-CPU trials
starting and stopping never leave -2.7e-17 CPUs free; with that rounding the
experiment's `used` never exceeds the cluster total. A placement group
request counts as the sum of its bundles, as Ray reserves them all.
Sums say too little on a cluster of several nodes; `packs` places every
bundle on a node.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    return Resources(
        cpu=_round(a.cpu + b.cpu),
        gpu=_round(a.gpu + b.gpu),
        memory=_round(a.memory + b.memory),
        object_store_memory=_round(a.object_store_memory + b.object_store_memory),
        custom=custom,
    )


def subtract(a: Resources, b: Resources) -> Resources:
    """`a - b`, clamped at zero (b is always part of a here)."""
    custom = {name: _round(amount - b.custom.get(name, 0.0)) for name, amount in a.custom.items()}
    return Resources(
        cpu=_round(a.cpu - b.cpu),
        gpu=_round(a.gpu - b.gpu),
        memory=_round(a.memory - b.memory),
        object_store_memory=_round(a.object_store_memory - b.object_store_memory),
        custom=custom,
    )


def fits(request: Resources, free: Resources) -> bool:
    """Whether `request` (its sum) fits in `free`, resource by resource."""
    if request.cpu > free.cpu + 1e-9 or request.gpu > free.gpu + 1e-9:
        return False
    if request.memory > free.memory + 1e-9:
        return False
    if request.object_store_memory > free.object_store_memory + 1e-9:
        return False
    return all(
        amount <= free.custom.get(name, 0.0) + 1e-9 for name, amount in request.custom.items()
    )


def never_fits(request: Resources, total: Resources) -> str | None:
    """Why `request` can never start on a cluster of `total`, or None.

    Too much in all is never-fits; so is, where the nodes are known
    (`total.bundles`), a bundle that no node can hold, a `STRICT_PACK`
    group no node holds whole, or a `STRICT_SPREAD` group with more bundles
    than nodes."""
    if not fits(request, total):
        return insufficient_message(request, total)
    nodes = total.bundles
    if not nodes:
        return None
    if request.strategy == "STRICT_SPREAD" and len(request.bundles) > len(nodes):
        return (
            "Insufficient cluster resources to launch trial: the trial requested "
            f"{len(request.bundles)} bundles on distinct nodes (STRICT_SPREAD) but the "
            f"cluster has {len(nodes)} nodes. Lower the trial's resources "
            "(resources_per_trial) or add nodes to the cluster."
        )
    if request.strategy == "STRICT_PACK" and request.bundles:
        wanted: tuple[Resources, ...] = (request,)
    else:
        wanted = request.bundles or (request,)
    for bundle in wanted:
        if not any(fits(bundle, node) for node in nodes):
            largest = max(nodes, key=lambda node: (node.cpu, node.gpu, node.memory))
            return (
                "Insufficient cluster resources to launch trial: the trial requested "
                f"a bundle of {bundle.summary()} but no node of the cluster has that much "
                f"(the largest has {largest.summary()}). Lower the trial's resources "
                "(resources_per_trial) or add a larger node."
            )
    return None


def packs(requests: Sequence[Resources], total: Resources) -> bool:
    """Whether all `requests` can be held at once, each bundle on one node
    of `total.bundles` (or, nodes unknown, their sum within `total`).

    Greedy first-fit in the order given: it may answer False where a
    packing exists, never True where none does. Callers use False as
    "someone may wait", which is safe to over-report (the Ray executor then
    ends an idle actor instead of keeping it). `STRICT_PACK` places the
    group's sum on one node, `STRICT_SPREAD` each bundle on its own node;
    `PACK` and `SPREAD` place bundles independently (Ray's soft strategies
    may do so too)."""
    nodes = list(total.bundles)
    if not nodes:
        held = nothing()
        for request in requests:
            held = add(held, request)
        return fits(held, total)
    for request in requests:
        # A request's own amounts are its bundles' sum (`fits` reads those).
        if request.strategy == "STRICT_PACK" or not request.bundles:
            bundles: tuple[Resources, ...] = (request,)
        else:
            bundles = request.bundles
        spread = request.strategy == "STRICT_SPREAD"
        used: set[int] = set()
        for bundle in bundles:
            where = next(
                (
                    i
                    for i, node in enumerate(nodes)
                    if not (spread and i in used) and fits(bundle, node)
                ),
                None,
            )
            if where is None:
                return False
            used.add(where)
            nodes[where] = subtract(nodes[where], bundle)
    return True


def insufficient_message(request: Resources, total: Resources) -> str:
    """Why a trial can never start on this cluster: what it asks, what exists."""
    whole = Resources(
        cpu=total.cpu,
        gpu=total.gpu,
        memory=total.memory,
        object_store_memory=total.object_store_memory,
        custom=total.custom,
    )
    return (
        "Insufficient cluster resources to launch trial: the trial requested "
        f"{request.summary()} but the whole cluster has {whole.summary()}. "
        "Lower the trial's resources (resources_per_trial) or add nodes to the cluster."
    )
