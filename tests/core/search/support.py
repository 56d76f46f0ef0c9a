"""Shared test material: a recording fake searcher, Hypothesis strategies
for valid domains and spaces, and an independent membership check.

`within` is written from the domain definitions, not from `is_valid`, so
the property tests do not check the implementation against itself.
"""

from __future__ import annotations

import math
from typing import Self

import msgspec
from hypothesis import strategies as st

from tunecore.core.search import (
    BasicVariantGenerator,
    Choice,
    Domain,
    GridSearch,
    LogRandInt,
    LogUniform,
    QLogRandInt,
    QLogUniform,
    QRandInt,
    QRandN,
    QUniform,
    RandInt,
    RandN,
    SamplingDomain,
    Suggestion,
    Uniform,
)
from tunecore.core.search.variants import call_functions, with_functions
from tunecore.model import JsonDict, JsonValue, Mode

# -- a searcher that records what it is told ----------------------------------------------------


class Completion(msgspec.Struct, frozen=True):
    trial_id: str
    result: JsonDict | None
    error: bool


class Recorder(msgspec.Struct, frozen=True, tag=True):
    """Suggests `{"n": 0}`, `{"n": 1}`, ... up to `budget` configs and records
    every hook call, so tests can see exactly what a wrapper forwards."""

    budget: int = 3
    suggested: tuple[str, ...] = ()
    results: tuple[tuple[str, JsonDict], ...] = ()
    completions: tuple[Completion, ...] = ()
    metric: str | None = None
    mode: Mode | None = None

    @property
    def is_finished(self) -> bool:
        return len(self.suggested) >= self.budget

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        return msgspec.structs.replace(self, metric=metric, mode=mode)

    def suggest(self, trial_id: str) -> tuple[Self, Suggestion | None]:
        if self.is_finished:
            return self, None
        n = len(self.suggested)
        suggestion = Suggestion(
            config={"n": n}, evaluated_params={"n": n}, experiment_tag=f"{n}_n={n}"
        )
        return msgspec.structs.replace(self, suggested=(*self.suggested, trial_id)), suggestion

    def on_trial_result(self, trial_id: str, result: JsonDict) -> Self:
        return msgspec.structs.replace(self, results=(*self.results, (trial_id, result)))

    def on_trial_complete(
        self, trial_id: str, result: JsonDict | None = None, *, error: bool = False
    ) -> Self:
        completion = Completion(trial_id, result, error)
        return msgspec.structs.replace(self, completions=(*self.completions, completion))


def drain(generator: BasicVariantGenerator, prefix: str = "t") -> list[Suggestion]:
    """Every remaining suggestion, in order (trial ids `t0`, `t1`, ...),
    answering what the generator asks of its `sample_from` functions as the
    shell does."""
    functions = generator.functions
    suggestions: list[Suggestion] = []
    while True:
        wanted = generator.wanted()
        if wanted is not None:
            parameters = with_functions(functions, wanted.paths)
            values = call_functions(wanted.config, parameters)
            generator = generator.with_values(wanted.key, values)
        generator, suggestion = generator.suggest(f"{prefix}{len(suggestions)}")
        if suggestion is None:
            assert generator.is_finished
            return suggestions
        suggestions.append(suggestion)


def at(config: JsonValue, path: tuple[str | int, ...]) -> JsonValue:
    for part in path:
        config = config[part]  # type: ignore[index]
    return config


# -- an independent membership check ---------------------------------------------------------------


def _multiple(value: float, q: float) -> bool:
    ratio = value / q
    return abs(ratio - round(ratio)) <= 1e-6 * max(1.0, abs(ratio))


def within(domain: Domain, value: JsonValue) -> bool:
    """Whether `value` is a value `domain` may produce."""
    is_float = isinstance(value, float)
    if isinstance(domain, Uniform):
        return is_float and domain.low <= value <= domain.high  # type: ignore[operator]
    if isinstance(domain, LogUniform):
        return is_float and domain.low <= value <= domain.high  # type: ignore[operator]
    if isinstance(domain, QUniform | QLogUniform):
        return (
            is_float
            and domain.low <= value <= domain.high  # type: ignore[operator]
            and _multiple(value, domain.q)  # type: ignore[arg-type]
        )
    if isinstance(domain, RandInt):
        return type(value) is int and domain.low <= value < domain.high
    if isinstance(domain, QRandInt):
        return type(value) is int and domain.low <= value <= domain.high and value % domain.q == 0
    if isinstance(domain, LogRandInt):
        return type(value) is int and domain.low <= value < domain.high
    if isinstance(domain, QLogRandInt):
        return type(value) is int and domain.low <= value <= domain.high and value % domain.q == 0
    if isinstance(domain, QRandN):
        return is_float and _multiple(value, domain.q)  # type: ignore[arg-type]
    if isinstance(domain, RandN):
        return is_float and math.isfinite(value)  # type: ignore[arg-type]
    if isinstance(domain, Choice):
        return value in domain.categories
    if isinstance(domain, GridSearch):
        return value in domain.values
    raise AssertionError(f"no membership rule for {domain!r}")


# -- strategies ------------------------------------------------------------------------------------

scalars: st.SearchStrategy[JsonValue] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(-1e6, 1e6, allow_nan=False),
    st.text(max_size=5),
)


@st.composite
def uniforms(draw: st.DrawFn) -> Uniform:
    low = draw(st.floats(-1e6, 1e6))
    return Uniform(low, low + draw(st.floats(0, 1e6)))


@st.composite
def quniforms(draw: st.DrawFn) -> QUniform:
    q = draw(st.sampled_from([0.1, 0.25, 0.5, 1.0, 2.0, 5.0]))
    k_low = draw(st.integers(-100, 100))
    k_high = k_low + draw(st.integers(0, 100))
    return QUniform(k_low * q, k_high * q, q)


@st.composite
def loguniforms(draw: st.DrawFn) -> LogUniform:
    low = draw(st.floats(1e-8, 1e3))
    return LogUniform(low, low * draw(st.floats(1, 1e6)))


@st.composite
def qloguniforms(draw: st.DrawFn) -> QLogUniform:
    q = draw(st.sampled_from([0.001, 0.01, 0.5, 1.0, 5.0]))
    k_low = draw(st.integers(1, 1000))
    k_high = k_low + draw(st.integers(0, 1000))
    return QLogUniform(k_low * q, k_high * q, q)


@st.composite
def randints(draw: st.DrawFn) -> RandInt:
    low = draw(st.integers(-1000, 1000))
    return RandInt(low, low + draw(st.integers(1, 1000)))


@st.composite
def qrandints(draw: st.DrawFn) -> QRandInt:
    q = draw(st.integers(1, 10))
    low = draw(st.integers(-100, 100))
    first = -(-low // q) * q
    return QRandInt(low, first + draw(st.integers(0, 100)), q)


@st.composite
def lograndints(draw: st.DrawFn) -> LogRandInt:
    low = draw(st.integers(1, 1000))
    return LogRandInt(low, low + draw(st.integers(1, 10**6)))


@st.composite
def qlograndints(draw: st.DrawFn) -> QLogRandInt:
    q = draw(st.integers(1, 10))
    low = draw(st.integers(1, 100))
    first = -(-low // q) * q
    return QLogRandInt(low, first + draw(st.integers(0, 1000)), q)


qrandns = st.builds(
    QRandN, st.floats(-100, 100), st.floats(0, 100), st.sampled_from([0.01, 0.5, 1.0, 3.0])
)
choices = st.lists(scalars, min_size=1, max_size=4).map(Choice)
randns = st.builds(RandN, st.floats(-100, 100), st.floats(0, 100))
grids = st.lists(scalars, min_size=1, max_size=3).map(GridSearch)

sampling_domains: st.SearchStrategy[SamplingDomain] = st.one_of(
    uniforms(),
    quniforms(),
    loguniforms(),
    qloguniforms(),
    randints(),
    qrandints(),
    lograndints(),
    qlograndints(),
    choices,
    randns,
    qrandns,
)

names = st.sampled_from(["lr", "momentum", "batch", "layers", "opt", "a", "b"])


@st.composite
def spaces(draw: st.DrawFn) -> tuple[dict[str, object], int]:
    """A param space without sample_from, nested one level deep, with up to
    three grids of up to three values, and its grid size computed here."""
    leaf = st.one_of(sampling_domains, scalars)
    inner = st.dictionaries(names, leaf, max_size=3)
    space: dict[str, object] = draw(
        st.dictionaries(names, st.one_of(leaf, inner, st.lists(leaf, max_size=2)), max_size=5)
    )
    grid_size = 1
    placed = draw(st.lists(st.sampled_from(["g1", "g2", "nested"]), unique=True, max_size=3))
    for where in placed:
        grid = draw(grids)
        grid_size *= len(grid.values)
        if where == "nested":
            space["nest"] = {"inner": draw(leaf), "g": grid}
        else:
            space[where] = grid
    return space, grid_size
