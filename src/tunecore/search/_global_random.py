"""numpy's (and torch's) global random state, lent to one optimizer at a time.

ZOOpt and HEBO draw from the process-wide generators (`np.random`, and for
HEBO torch's default generator too), not from a generator of their own. A
searcher keeps its optimizer's states here, seeded once, and swaps them in
around each call into the optimizer: what else in the process draws from
the global generators changes none of its suggestions, and its draws change
nothing else's. That is what makes such a searcher repeat from its seed and
rebuild exactly on resume.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np


class GlobalRandom:
    """The global random states one optimizer owns."""

    def __init__(self, seed: int, *, torch: bool = False) -> None:
        """`torch`: the optimizer draws from torch's default generator too."""
        self._numpy: Any = np.random.RandomState(seed).get_state()
        self._torch: Any = None
        if torch:
            import torch as torch_module  # noqa: PLC0415 - optional package

            self._torch = torch_module.Generator().manual_seed(seed).get_state()

    @contextlib.contextmanager
    def lent(self) -> Iterator[None]:
        """The global generators hold this optimizer's states while it runs;
        afterwards they hold what they held before, and it keeps its own."""
        outside = self._swap(self._numpy, self._torch)
        try:
            yield
        finally:
            self._numpy, self._torch = self._swap(*outside)

    def _swap(self, numpy_state: Any, torch_state: Any) -> tuple[Any, Any]:
        """Set the global states; the ones they held."""
        held = np.random.get_state()
        np.random.set_state(numpy_state)
        if torch_state is None:
            return held, None
        import torch  # noqa: PLC0415 - optional package

        held_torch = torch.get_rng_state()
        torch.set_rng_state(torch_state)
        return held, held_torch


__all__ = ["GlobalRandom"]
