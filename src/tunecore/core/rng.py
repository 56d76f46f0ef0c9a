"""A seeded random number generator whose whole state is one integer.

The core may not use `random` (its state lives outside our data), so
schedulers and searchers keep an `Rng` inside their own state struct and
thread it through: every draw returns the next generator with the value. The
same seed gives the same stream on every machine and every Python version,
which is what makes replay and offline simulation bit-deterministic.

The generator is SplitMix64 (Steele, Lea, Flood 2014): a 64-bit counter
advanced by the golden-ratio increment and passed through a mixing function.
It is fast in pure Python, passes BigCrush, and needs no more state than an
int.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


class Rng(msgspec.Struct, frozen=True, array_like=True):
    """The generator state: the SplitMix64 counter."""

    state: int


def seeded(seed: int) -> Rng:
    return Rng(seed & _MASK)


def next_u64(rng: Rng) -> tuple[Rng, int]:
    state = (rng.state + _GOLDEN) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return Rng(state), z ^ (z >> 31)


def random_float(rng: Rng) -> tuple[Rng, float]:
    """Uniform on [0, 1) with 53 random bits."""
    rng, bits = next_u64(rng)
    return rng, (bits >> 11) * 2.0**-53


def uniform(rng: Rng, low: float, high: float) -> tuple[Rng, float]:
    """Uniform on [low, high)."""
    rng, unit = random_float(rng)
    return rng, low + (high - low) * unit


def integer_below(rng: Rng, bound: int) -> tuple[Rng, int]:
    """Uniform on [0, bound), unbiased (rejection sampling)."""
    if bound <= 0:
        raise ValueError(f"bound must be positive, got {bound}")
    limit = (1 << 64) - ((1 << 64) % bound)
    while True:
        rng, bits = next_u64(rng)
        if bits < limit:
            return rng, bits % bound


def normal(rng: Rng, mean: float = 0.0, sd: float = 1.0) -> tuple[Rng, float]:
    """One normal draw by the Box-Muller transform (one of the pair is
    discarded so the state stays a single integer)."""
    rng, u1 = random_float(rng)
    rng, u2 = random_float(rng)
    radius = math.sqrt(-2.0 * math.log(1.0 - u1))
    return rng, mean + sd * radius * math.cos(2.0 * math.pi * u2)


def weighted_index(rng: Rng, weights: Sequence[float]) -> tuple[Rng, int]:
    """An index drawn with probability proportional to its weight."""
    total = math.fsum(weights)
    rng, point = uniform(rng, 0.0, total)
    running = 0.0
    for index, weight in enumerate(weights):
        running += weight
        if point < running:
            return rng, index
    return rng, len(weights) - 1
