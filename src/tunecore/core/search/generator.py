"""Ray's BasicVariantGenerator as a searcher whose whole progress is data.

The generator suggests the variants of its param space in order (see
`variants` for the order and the tags): first one round per point of
`points_to_evaluate` (the point's values replace those of the space; the
grids it does not set are walked, the rest is drawn), then the remaining
`num_samples - len(points)` rounds over the whole grid, each variant with
fresh random draws, as Ray does. It keeps only a cursor (how many variants
it has suggested) and the `Rng` after the last draw, so a suggestion costs
O(size of the space + points) however large grid x num_samples is, and a
decoded generator continues exactly where the encoded one stopped.

`sample_from` functions are Python code, which the generator cannot hold
(it must encode, and replay must not need user code). It holds their places
and, before suggesting a variant that has some, asks for their values
(`wanted`): the shell calls the functions on the variant's config and logs
the values, which the generator takes (`with_values`) and puts in.

Invariants
- `suggested` counts suggestions; variant `i` gets experiment tag index `i`.
- Variant `i` is drawn from the `Rng` left by variant `i - 1`: the same seed
  gives the same sequence of configs, and resuming from any encoded state
  gives the same remaining configs as never stopping. With
  `constant_grid_search` the `Rng` only moves on after the last grid point
  of a round, so every grid point of a round gets the same random values.
- Fields added after the first log format (`points_to_evaluate`,
  `constant_grid_search`, `drawn`) are UNSET when not in use, so a
  generator from an older log encodes to the same bytes.
- `drawn` holds the function values for variant `suggested` once given;
  without them a variant that has functions is not suggested (`suggest`
  returns None and `wanted` says what is missing).
- `is_finished` once every variant was suggested (never for
  `num_samples == -1`, Ray's "unbounded").
- With `max_concurrent > 0` the ids of suggested trials that have not
  completed are kept in `live` (in suggestion order, so encoding is
  deterministic) and `suggest` returns None while `max_concurrent` are live.
  With 0 nothing is tracked and the state stays O(1).
- Results teach it nothing: `on_trial_result` returns the same generator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Self, cast

import msgspec
from msgspec import UNSET, UnsetType

from tunecore.core.rng import Rng, seeded
from tunecore.core.search.base import Suggestion, ValuesWanted
from tunecore.core.search.domains import SampleFrom, plain_json
from tunecore.core.search.points import apply_point
from tunecore.core.search.variants import (
    ParamSpace,
    Variant,
    evaluated_params,
    experiment_tag,
    parse_space,
    resolve_sampled,
    with_derived,
    without_functions,
)
from tunecore.core.search.view import Path
from tunecore.model import InvalidFieldError, JsonDict, JsonValue, Mode
from tunecore.model.errors import require_bool, require_int

UNBOUNDED = -1
"""`num_samples` for a search that never finishes (Ray's `num_samples=-1`)."""

_NAME = "BasicVariantGenerator"


class BasicVariantGenerator(msgspec.Struct, frozen=True, tag=True, dict=True):
    """Grid x random search over `param_space`.

    Call it like Ray's: `BasicVariantGenerator(points_to_evaluate=[{"lr":
    0.01}], constant_grid_search=True)` given to `TuneConfig(search_alg=...)`
    takes the Tuner's `param_space`, `num_samples` and seed
    (`with_space`); or on its own, `BasicVariantGenerator({"lr":
    loguniform(1e-4, 1e-1), "momentum": grid_search([0.8, 0.9])},
    num_samples=4, seed=0)`. `random_state` (an int) is Ray's name for
    `seed`. On construction the space is parsed into a
    `ParamSpace` (validated, errors naming `param_space[...]`), its
    `sample_from` functions are taken out (kept, for the shell, in
    `functions`, which is not encoded) and `rng` is seeded from `seed`; the
    fields from `rng` on are progress and are left at their defaults.
    """

    param_space: ParamSpace | Mapping[str, object] | None = None
    num_samples: int = 1
    seed: int | None = None
    max_concurrent: int = 0
    points_to_evaluate: Sequence[Mapping[str, object]] | UnsetType | None = UNSET
    constant_grid_search: bool | UnsetType = UNSET
    random_state: int | UnsetType | None = UNSET
    rng: Rng | None = None
    suggested: int = 0
    live: tuple[str, ...] = ()
    drawn: tuple[JsonValue, ...] | UnsetType = UNSET

    def __post_init__(self) -> None:
        require_int(f"{_NAME}.num_samples", self.num_samples)
        if self.num_samples < 1 and self.num_samples != UNBOUNDED:
            raise InvalidFieldError(
                f"{_NAME}.num_samples",
                self.num_samples,
                f"an integer >= 1, or {UNBOUNDED} for no bound",
            )
        if self.random_state is not UNSET:  # Ray's name for the seed
            if self.seed is None:
                msgspec.structs.force_setattr(self, "seed", self.random_state)
            msgspec.structs.force_setattr(self, "random_state", UNSET)
        if self.seed is not None:
            require_int(f"{_NAME}.seed", self.seed)
        require_int(f"{_NAME}.max_concurrent", self.max_concurrent, minimum=0)
        require_int(f"{_NAME}.suggested", self.suggested, minimum=0)
        if self.constant_grid_search is not UNSET:
            require_bool(f"{_NAME}.constant_grid_search", self.constant_grid_search)
            if not self.constant_grid_search:  # the default is not encoded (older logs)
                msgspec.structs.force_setattr(self, "constant_grid_search", UNSET)
        space = self.param_space
        if space is not None and not isinstance(space, ParamSpace):
            parsed = parse_space(space)
            self.__dict__["functions"] = {p.path: p.domain for p in parsed.derived}
            msgspec.structs.force_setattr(self, "param_space", without_functions(parsed))
        points = self.points_to_evaluate
        if points is None or points is UNSET:
            points = ()
        if not isinstance(points, list | tuple):
            raise InvalidFieldError(f"{_NAME}.points_to_evaluate", points, "a list of dicts")
        checked: list[JsonDict] = []
        for index, point in enumerate(points):
            where = f"{_NAME}.points_to_evaluate[{index}]"
            if not isinstance(point, Mapping):
                raise InvalidFieldError(where, point, "a dict of parameter values")
            value = plain_json(where, point)
            assert isinstance(value, dict)
            checked.append(value)
        msgspec.structs.force_setattr(self, "points_to_evaluate", tuple(checked) or UNSET)
        if self.param_space is not None:
            for index in range(len(checked)):
                self._point_space(index)  # a point that cannot apply fails now
        if self.rng is None:
            msgspec.structs.force_setattr(self, "rng", seeded(self.seed or 0))

    def with_space(
        self, param_space: Mapping[str, object], *, num_samples: int, seed: int
    ) -> BasicVariantGenerator:
        """This generator's settings over the Tuner's space, as Ray's
        `add_configurations` does; its own seed, if it has one, wins."""
        return BasicVariantGenerator(
            param_space,
            num_samples=num_samples,
            seed=self.seed if self.seed is not None else seed,
            max_concurrent=self.max_concurrent,
            points_to_evaluate=self.points,
            constant_grid_search=self.constant_grid_search,
        )

    @property
    def points(self) -> tuple[JsonDict, ...]:
        """`points_to_evaluate` as checked on construction."""
        points = self.points_to_evaluate
        if isinstance(points, UnsetType) or points is None:
            return ()
        return cast(tuple[JsonDict, ...], points)  # construction made it a tuple of dicts

    @property
    def functions(self) -> Mapping[Path, SampleFrom]:
        """The `sample_from` domains with their functions, by path; empty
        once decoded (functions are not data)."""
        found: Mapping[Path, SampleFrom] = self.__dict__.get("functions", {})
        return found

    @property
    def space(self) -> ParamSpace:
        """The parsed param space (set by construction or `with_space`)."""
        space = self.param_space
        if space is None:
            raise InvalidFieldError(
                f"{_NAME}.param_space", None, "a param space (Tuner(param_space=...) gives it)"
            )
        assert isinstance(space, ParamSpace)
        return space

    @property
    def total(self) -> int | None:
        """How many variants it will suggest in all; None if unbounded."""
        if self.num_samples == UNBOUNDED:
            return None
        rounds = max(0, self.num_samples - len(self.points))
        return self._points_total() + self.space.grid_size * rounds

    @property
    def is_finished(self) -> bool:
        total = self.total
        return total is not None and self.suggested >= total

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Variant generation ignores the objective."""
        return self

    def wanted(self) -> ValuesWanted | None:
        """The function values the next variant needs, if it has functions
        and they were not given yet. (Asked whenever the generator
        changed, `core.experiment.requests`: a space
        without functions, where a point can add none, answers first.)"""
        if not self.space.derived or self.drawn is not UNSET or self.is_finished:
            return None
        space, grid_point, _ = self._locate(self.suggested)
        if not space.derived:
            return None
        assert self.rng is not None
        _, variant = resolve_sampled(space, grid_point, self.rng)
        paths = tuple(parameter.path for parameter in space.derived)
        return ValuesWanted(key=self.suggested, paths=paths, config=variant.config)

    def with_values(self, key: int, values: Sequence[JsonValue]) -> Self:
        """Hold the function values for variant `key` (the next one)."""
        wanted = self.wanted()
        if wanted is None or wanted.key != key or len(values) != len(wanted.paths):
            raise InvalidFieldError(f"{_NAME}.drawn", list(values), f"the values {wanted!r} asks")
        return msgspec.structs.replace(self, drawn=tuple(values))

    def suggest(self, trial_id: str) -> tuple[Self, Suggestion | None]:
        if self.is_finished:
            return self, None
        if self.max_concurrent and len(self.live) >= self.max_concurrent:
            return self, None
        index = self.suggested
        space, grid_point, preset = self._locate(index)
        if space.derived and self.drawn is UNSET:
            return self, None  # wanted() says what is missing
        assert self.rng is not None
        rng, variant = resolve_sampled(space, grid_point, self.rng)
        if space.derived:
            assert not isinstance(self.drawn, UnsetType)
            variant = with_derived(variant, space.derived, self.drawn)
        if preset:
            resolved = sorted((*variant.resolved, *preset), key=lambda item: item[0])
            variant = Variant(variant.config, tuple(resolved))
        if self.constant_grid_search is True and grid_point != space.grid_size - 1:
            rng = self.rng  # the round's random values stay for its other grid points
        suggestion = Suggestion(
            config=variant.config,
            evaluated_params=evaluated_params(variant),
            experiment_tag=experiment_tag(index, variant),
        )
        live = (*self.live, trial_id) if self.max_concurrent else self.live
        advanced = msgspec.structs.replace(
            self, rng=rng, suggested=index + 1, live=live, drawn=UNSET
        )
        return advanced, suggestion

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

    # -- where variant i comes from ------------------------------------------------------------

    def _point_space(self, index: int) -> tuple[ParamSpace, tuple[tuple[Path, JsonValue], ...]]:
        return apply_point(self.space, self.points[index], f"{_NAME}.points_to_evaluate[{index}]")

    def _points_total(self) -> int:
        return sum(self._point_space(i)[0].grid_size for i in range(len(self.points)))

    def _locate(self, index: int) -> tuple[ParamSpace, int, tuple[tuple[Path, JsonValue], ...]]:
        """Variant `index` as (its space, its grid point, the point's values)."""
        for point in range(len(self.points)):
            space, preset = self._point_space(point)
            if index < space.grid_size:
                return space, index, preset
            index -= space.grid_size
        space = self.space
        return space, index % space.grid_size, ()
