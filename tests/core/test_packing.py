"""`packs`: whether requests can be held at once, node by node (issue 11:
two trials pinned to a one-CPU node fit by sums, not on the node)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from tunecore.core.resources import add, fits, nothing, packs
from tunecore.model import Resources

NODE1 = Resources(cpu=1.0, custom={"node1": 1.0})
NODE2 = Resources(cpu=1.0, custom={"node2": 1.0})
TWO_NODES = Resources(cpu=2.0, custom={"node1": 1.0, "node2": 1.0}, bundles=(NODE1, NODE2))
PINNED = Resources(cpu=1.0, custom={"node2": 0.01})


def _sum(requests: list[Resources]) -> Resources:
    held = nothing()
    for request in requests:
        held = add(held, request)
    return held


def test_two_trials_pinned_to_a_one_cpu_node_do_not_pack_though_their_sum_fits() -> None:
    assert fits(_sum([PINNED, PINNED]), TWO_NODES)
    assert packs([PINNED], TWO_NODES)
    assert not packs([PINNED, PINNED], TWO_NODES)
    assert packs([PINNED, Resources(cpu=1.0)], TWO_NODES)


def test_without_known_nodes_the_sum_decides() -> None:
    total = Resources(cpu=2.0, custom={"node2": 1.0})
    assert packs([PINNED, PINNED], total)
    assert not packs([PINNED, PINNED, PINNED], total)


def test_bundles_are_placed_one_by_one_unless_the_strategy_is_strict() -> None:
    half = Resources(cpu=0.5)
    group = Resources(cpu=1.5, bundles=(Resources(cpu=1.0), half))
    assert packs([group], TWO_NODES)
    assert not packs([Resources(cpu=1.5, bundles=group.bundles, strategy="STRICT_PACK")], TWO_NODES)
    spread = Resources(cpu=1.0, bundles=(half, half), strategy="STRICT_SPREAD")
    assert packs([spread], TWO_NODES)
    assert packs([spread, Resources(cpu=1.0, bundles=(half, half))], TWO_NODES)
    assert not packs(
        [Resources(cpu=0.5), spread, Resources(cpu=0.75, custom={"node2": 0.1})], TWO_NODES
    )


_amount = st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0])
_request = st.builds(
    lambda cpu, gpu, tag: Resources(cpu=cpu, gpu=gpu, custom={tag: 0.5} if tag else {}),
    _amount,
    _amount,
    st.sampled_from(["", "a", "b"]),
)
_node = st.builds(
    lambda cpu, gpu, a, b: Resources(cpu=cpu, gpu=gpu, custom={"a": a, "b": b}),
    _amount,
    _amount,
    st.sampled_from([0.0, 1.0]),
    st.sampled_from([0.0, 1.0]),
)


def _cluster(nodes: list[Resources]) -> Resources:
    whole = _sum(nodes)
    return Resources(cpu=whole.cpu, gpu=whole.gpu, custom=whole.custom, bundles=tuple(nodes))


def _some_packing(requests: list[Resources], nodes: list[Resources]) -> bool:
    """Exhaustive search: some node for each request, every node within."""
    for choice in itertools.product(range(len(nodes)), repeat=len(requests)):
        on = [
            [r for r, n in zip(requests, choice, strict=True) if n == i] for i in range(len(nodes))
        ]
        if all(fits(_sum(held), node) for held, node in zip(on, nodes, strict=True)):
            return True
    return False


@given(st.lists(_request, max_size=4), st.lists(_node, min_size=1, max_size=3))
def test_packs_only_when_a_packing_exists(
    requests: list[Resources], nodes: list[Resources]
) -> None:
    """Safe: a True is never wrong (a False may be, greedy packing)."""
    if packs(requests, _cluster(nodes)):
        assert _some_packing(requests, nodes)
        assert fits(_sum(requests), _cluster(nodes))


@given(_request, st.integers(0, 4), st.lists(_node, min_size=1, max_size=3))
def test_alike_requests_pack_exactly(
    request: Resources, count: int, nodes: list[Resources]
) -> None:
    """Trials asking alike (the common case, where actors are reused):
    no packing is missed."""
    requests = [request] * count
    assert packs(requests, _cluster(nodes)) == _some_packing(requests, nodes)


@given(st.lists(_request, max_size=4), _node)
def test_on_one_node_packing_is_the_sum(requests: list[Resources], node: Resources) -> None:
    assert packs(requests, _cluster([node])) == fits(_sum(requests), node)
