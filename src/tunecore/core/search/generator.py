"""Ray's BasicVariantGenerator as a searcher whose whole progress is data.

The generator suggests the variants of its param space in order (see
`variants` for the order and the tags): `num_samples` rounds over the grid,
each variant with fresh random draws. It keeps only a cursor (how many
variants it has suggested) and the `Rng` after the last draw, so a
suggestion costs O(size of the space) however large grid x num_samples is,
and a decoded generator continues exactly where the encoded one stopped.

Invariants
- `suggested` counts suggestions; variant `i` gets experiment tag index `i`.
- Variant `i` is drawn from the `Rng` left by variant `i - 1`: the same seed
  gives the same sequence of configs, and resuming from any encoded state
  gives the same remaining configs as never stopping.
- `is_finished` once `grid_size * num_samples` variants were suggested
  (never for `num_samples == -1`, Ray's "unbounded").
- With `max_concurrent > 0` the ids of suggested trials that have not
  completed are kept in `live` (in suggestion order, so encoding is
  deterministic) and `suggest` returns None while `max_concurrent` are live.
  With 0 nothing is tracked and the state stays O(1).
- Results teach it nothing: `on_trial_result` returns the same generator.

Not (yet) supported from Ray: `points_to_evaluate`, `constant_grid_search`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Self

import msgspec

from tunecore.core.rng import Rng, seeded
from tunecore.core.search.base import Suggestion
from tunecore.core.search.variants import (
    ParamSpace,
    evaluated_params,
    experiment_tag,
    parse_space,
    resolve,
)
from tunecore.model import InvalidFieldError, JsonDict, Mode
from tunecore.model.errors import require_int

UNBOUNDED = -1
"""`num_samples` for a search that never finishes (Ray's `num_samples=-1`)."""


class BasicVariantGenerator(msgspec.Struct, frozen=True, tag=True):
    """Grid x random search over `param_space`.

    Call it like Ray's: `BasicVariantGenerator({"lr": loguniform(1e-4, 1e-1),
    "momentum": grid_search([0.8, 0.9])}, num_samples=4, seed=0)`. On
    construction the space is parsed into a `ParamSpace` (validated, errors
    naming `param_space[...]`) and `rng` is seeded from `seed`; the other
    fields are progress and are left at their defaults by callers.
    """

    param_space: ParamSpace | Mapping[str, object]
    num_samples: int = 1
    seed: int = 0
    max_concurrent: int = 0
    rng: Rng | None = None
    suggested: int = 0
    live: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        require_int("BasicVariantGenerator.num_samples", self.num_samples)
        if self.num_samples < 1 and self.num_samples != UNBOUNDED:
            raise InvalidFieldError(
                "BasicVariantGenerator.num_samples",
                self.num_samples,
                f"an integer >= 1, or {UNBOUNDED} for no bound",
            )
        require_int("BasicVariantGenerator.seed", self.seed)
        require_int("BasicVariantGenerator.max_concurrent", self.max_concurrent, minimum=0)
        require_int("BasicVariantGenerator.suggested", self.suggested, minimum=0)
        if not isinstance(self.param_space, ParamSpace):
            msgspec.structs.force_setattr(self, "param_space", parse_space(self.param_space))
        if self.rng is None:
            msgspec.structs.force_setattr(self, "rng", seeded(self.seed))

    @property
    def space(self) -> ParamSpace:
        """The parsed param space (construction always parses it)."""
        space = self.param_space
        assert isinstance(space, ParamSpace)
        return space

    @property
    def total(self) -> int | None:
        """How many variants it will suggest in all; None if unbounded."""
        if self.num_samples == UNBOUNDED:
            return None
        return self.space.grid_size * self.num_samples

    @property
    def is_finished(self) -> bool:
        total = self.total
        return total is not None and self.suggested >= total

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Variant generation ignores the objective."""
        return self

    def suggest(self, trial_id: str) -> tuple[Self, Suggestion | None]:
        if self.is_finished:
            return self, None
        if self.max_concurrent and len(self.live) >= self.max_concurrent:
            return self, None
        assert self.rng is not None
        space = self.space
        index = self.suggested
        rng, variant = resolve(space, index % space.grid_size, self.rng)
        suggestion = Suggestion(
            config=variant.config,
            evaluated_params=evaluated_params(variant),
            experiment_tag=experiment_tag(index, variant),
        )
        live = (*self.live, trial_id) if self.max_concurrent else self.live
        return msgspec.structs.replace(self, rng=rng, suggested=index + 1, live=live), suggestion

    def on_trial_result(self, trial_id: str, result: JsonDict) -> Self:
        return self

    def on_trial_complete(
        self, trial_id: str, result: JsonDict | None = None, *, error: bool = False
    ) -> Self:
        """Frees the trial's place under `max_concurrent`."""
        if trial_id not in self.live:
            return self
        live = tuple(live_id for live_id in self.live if live_id != trial_id)
        return msgspec.structs.replace(self, live=live)
