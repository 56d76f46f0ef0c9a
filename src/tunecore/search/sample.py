"""`ray.tune.search.sample`: Ray Tune's domain classes, the search-space
functions, and the checks user code makes with them.

Ray's domains are mutable objects: `Float(0, 1)` holds bounds, `.uniform()`
returns a copy with a sampler set, `.quantized(0.1)` wraps that sampler, and
`.sample()` draws with numpy. tunecore's domains
(`tunecore.core.search.domains`, what `tune.uniform` and the other
functions return) are immutable values drawn from a seeded generator state,
so that a replay draws the same configs. This module carries both:

- Ray's classes, to build a domain by hand as Ray's docs and searchers do,
  with Ray's attributes (`lower`, `upper`, `categories`, `sampler`,
  `get_sampler()`, `is_grid()`, `cast`, `is_valid`, `domain_str`) and Ray's
  `sample(config, size, random_state)`, which draws as Ray's does (numpy;
  the same `random_state` gives the same values). They are
  `DomainBuilder`s: a param space, a searcher's space and PBT's mutations
  take the immutable domain each stands for (`to_domain()`, validated as
  that domain), and only that is logged, never the object.
- Ray's `isinstance` checks on tunecore's domains, by kind:
  `isinstance(tune.uniform(0, 1), Float)` holds, as in Ray.

Where a hand-built domain's `to_domain()` differs from Ray's own draws, it
is where `tune.*` differs too (the module doc of the domains):
`Integer(a, b).uniform().quantized(1)` is `tune.qrandint(a, b, 1)`, upper
bound included. A grid's `sample()` raises the `RuntimeError` that Ray's
returns.
"""

from __future__ import annotations

import inspect
import math
import warnings
from abc import ABCMeta, abstractmethod
from collections.abc import Callable, Sequence
from copy import copy
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeAlias, TypeVar

import numpy as np

from tunecore.core.search import domains
from tunecore.core.search.built import built
from tunecore.core.search.domains import (
    DomainBuilder,
    lograndint,
    loguniform,
    qlograndint,
    qloguniform,
    qrandint,
    qrandn,
    quniform,
    randint,
    randn,
    sample_from,
    uniform,
)
from tunecore.core.search.view import ConfigView, Probe
from tunecore.model import InvalidFieldError
from tunecore.search import object_values
from tunecore.search.object_values import choice

_MISSING = object()
"""Ray's sentinel for the deprecated `base` argument."""


def _warn_for_base() -> None:
    warnings.warn(
        "The `base` argument is deprecated. "
        "Please remove it as it is not actually needed in this method.",
        DeprecationWarning,
        stacklevel=3,
    )


# -- samplers: what `get_sampler()` returns, for Ray's isinstance checks ---------------------------


class Sampler:
    """How a domain draws its values."""


class BaseSampler(Sampler):
    """A `Function`'s sampler: it calls the function."""

    def __str__(self) -> str:
        return "Base"


class Uniform(Sampler):
    """Uniform between the bounds (or over the categories)."""

    def __str__(self) -> str:
        return "Uniform"


class LogUniform(Sampler):
    """Uniform in the logarithm between the bounds."""

    def __init__(self, base: object = _MISSING) -> None:
        if base is not _MISSING:
            _warn_for_base()

    def __str__(self) -> str:
        return "LogUniform"


class Normal(Sampler):
    """The normal distribution with `mean` and `sd`."""

    def __init__(self, mean: float = 0.0, sd: float = 0.0) -> None:
        if not sd > 0:
            raise ValueError(f"Normal(sd={sd!r}): SD has to be strictly greater than 0")
        self.mean = mean
        self.sd = sd

    def __str__(self) -> str:
        return "Normal"


class Grid(Sampler):
    """Every category in turn: a `Categorical(...).grid()` is a grid search."""


class Quantized(Sampler):
    """`sampler`'s draws rounded to a multiple of `q` (an int for an
    `Integer`: the domain it builds checks it)."""

    def __init__(self, sampler: Sampler, q: Any) -> None:
        self.sampler = sampler
        self.q = q

    def get_sampler(self) -> Sampler:
        return self.sampler


# -- numpy draws, as Ray makes them ----------------------------------------------------------------


class _Draws:
    """Ray's `random_state`: None (numpy's global generator), a seed, a
    `np.random.Generator` or a legacy `np.random.RandomState`."""

    def __init__(self, random_state: object) -> None:
        if isinstance(random_state, _Draws):
            self.source: Any = random_state.source
        elif random_state is None:
            self.source = np.random
        elif isinstance(random_state, np.random.Generator | np.random.RandomState):
            self.source = random_state
        else:
            self.source = np.random.default_rng(random_state)  # type: ignore[arg-type]

    def uniform(self, low: float, high: float, size: int) -> Any:
        return self.source.uniform(low, high, size=size)

    def normal(self, mean: float, sd: float, size: int) -> Any:
        return self.source.normal(mean, sd, size=size)

    def integers(self, low: int, high: int, size: int) -> Any:
        if isinstance(self.source, np.random.Generator):
            return self.source.integers(low, high, size=size)
        return self.source.randint(low, high, size=size)

    def choice(self, count: int, size: int) -> Any:
        return self.source.choice(np.arange(0, count), size=size)


if TYPE_CHECKING:
    RandomState: TypeAlias = np.random.Generator | np.random.RandomState | int | _Draws | None
    """What `Domain.sample(random_state=...)` takes, under Ray's name
    (`ray.tune.search.sample.RandomState`, which Ray's variant generator and
    copies of it annotate with): a numpy generator, a legacy `RandomState`,
    a seed, the wrapper `sample` makes of those, or None for numpy's global
    one. Made at run time on first use (`__getattr__`): spelling it out
    here would load `numpy.random`, which a run drawing its seed from the OS
    never needs (6 ms of every `fit()`)."""


def __getattr__(name: str) -> object:
    if name == "RandomState":
        return np.random.Generator | np.random.RandomState | int | _Draws | None
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- the domains -----------------------------------------------------------------------------------


class _Kind(ABCMeta):
    """A Ray domain class that also counts tunecore's immutable domains of
    its kind (`members`) as instances, as Ray counts `tune.uniform(0, 1)`
    a `Float`."""

    members: tuple[type, ...]

    def __instancecheck__(cls, value: object) -> bool:
        return super().__instancecheck__(value) or isinstance(value, cls.members)

    def __subclasscheck__(cls, subclass: type) -> bool:
        return super().__subclasscheck__(subclass) or issubclass(subclass, cls.members)


_FLOATS = (
    domains.Uniform,
    domains.QUniform,
    domains.LogUniform,
    domains.QLogUniform,
    domains.RandN,
    domains.QRandN,
)
_INTEGERS = (domains.RandInt, domains.QRandInt, domains.LogRandInt, domains.QLogRandInt)


class Domain(DomainBuilder, metaclass=_Kind):
    """A value to search over: its valid values and the sampler that draws
    them. Any tunecore domain but a `grid_search` is one (in Ray a grid is a
    plain dict and no `Domain` either)."""

    members: ClassVar[tuple[type, ...]] = (
        *_FLOATS,
        *_INTEGERS,
        domains.Choice,
        domains.SampleFrom,
    )
    sampler: Sampler | None = None
    default_sampler_cls: ClassVar[type[Sampler]] = Uniform

    def cast(self, value: Any) -> Any:
        """`value` as the domain's type."""
        return value

    def set_sampler(self, sampler: Sampler, allow_override: bool = False) -> None:
        if self.sampler and not allow_override:
            raise ValueError(
                "You can only choose one sampler for parameter domains. Existing sampler "
                f"for parameter {type(self).__name__}: {self.sampler}. Tried to add {sampler}"
            )
        self.sampler = sampler

    def get_sampler(self) -> Sampler:
        return self.sampler or self.default_sampler_cls()

    def sample(self, config: Any = None, size: int = 1, random_state: RandomState = None) -> Any:
        """`size` values drawn as Ray draws them: one value as the domain's
        type, several as a sequence."""
        items = self._draw(self.get_sampler(), config, size, _Draws(random_state))
        return items if len(items) > 1 else self.cast(items[0])

    def is_grid(self) -> bool:
        return isinstance(self.sampler, Grid)

    def is_function(self) -> bool:
        return False

    @abstractmethod
    def is_valid(self, value: Any) -> bool:
        """Whether `value` is one of the domain's values."""

    @property
    def domain_str(self) -> str:
        return "(unknown)"

    @abstractmethod
    def _draw(self, sampler: Sampler, config: Any, size: int, draws: _Draws) -> Any:
        """`size` values from `sampler` (a numpy array or a list)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self.domain_str} ({self.get_sampler()})"


def _grid_index(bound: float, q: float, inwards: Callable[[float], Any]) -> float:
    """`bound`'s index on the multiples of q, rounded into the domain
    (`inwards`: `np.ceil` for a lower bound, `np.floor` for an upper one);
    an infinite bound stays as it is."""
    if not math.isfinite(bound):
        return bound
    scaled = bound / q
    nearest = round(scaled)
    return nearest if math.isclose(scaled, nearest) else float(inwards(scaled))


def _needs_positive_bounds(lower: float, upper: float) -> None:
    if not lower > 0:
        raise ValueError(
            f"LogUniform requires a lower bound greater than 0. Got: {lower}. Did you pass a "
            "variable that has been log-transformed? If so, pass the non-transformed value instead."
        )
    if not 0 < upper < math.inf:
        raise ValueError(
            f"LogUniform requires a upper bound greater than 0. Got: {upper}. Did you pass a "
            "variable that has been log-transformed? If so, pass the non-transformed value instead."
        )


def _unquantized(sampler: Sampler) -> tuple[Sampler, Any]:
    """`sampler` without its quantization, and its q (None: not quantized)."""
    if isinstance(sampler, Quantized):
        return sampler.sampler, sampler.q
    return sampler, None


class _Bounded(Domain):
    """What `Float` and `Integer` share: the range [lower, upper] and its
    `loguniform()` draws."""

    lower: float
    upper: float

    def loguniform(self, base: object = _MISSING) -> Self:
        if base is not _MISSING:
            _warn_for_base()
        _needs_positive_bounds(self.lower, self.upper)
        return _with_sampler(self, LogUniform())

    def is_valid(self, value: Any) -> bool:
        return bool(self.lower <= value <= self.upper)

    @property
    def domain_str(self) -> str:
        return f"({self.lower}, {self.upper})"


class Float(_Bounded):
    """Floats between `lower` and `upper` (None: unbounded), drawn by
    `uniform()`, `loguniform()` or `normal(mean, sd)`, each `quantized(q)`."""

    members: ClassVar[tuple[type, ...]] = _FLOATS

    def __init__(self, lower: float | None, upper: float | None) -> None:
        self.lower: float = lower if lower is not None else -math.inf
        self.upper: float = upper if upper is not None else math.inf

    def cast(self, value: Any) -> float:
        return float(value)

    def uniform(self) -> Float:
        if not self.lower > -math.inf:
            raise ValueError(
                "Uniform requires a lower bound. Make sure to set the `lower` parameter of "
                "`Float()`."
            )
        if not self.upper < math.inf:
            raise ValueError(
                "Uniform requires a upper bound. Make sure to set the `upper` parameter of "
                "`Float()`."
            )
        return _with_sampler(self, Uniform())

    def normal(self, mean: float = 0.0, sd: float = 1.0) -> Float:
        return _with_sampler(self, Normal(mean, sd))

    def quantized(self, q: float) -> Float:
        for name, bound in (("lower", self.lower), ("upper", self.upper)):
            if math.isfinite(bound) and not math.isclose(bound / q, round(bound / q)):
                raise ValueError(
                    f"Your {name} variable bound {bound} is not divisible by quantization "
                    f"factor {q}."
                )
        return _with_sampler(self, Quantized(self.get_sampler(), q), allow_override=True)

    def to_domain(self) -> domains.Domain:
        sampler = self.get_sampler()
        inner, q = _unquantized(sampler)
        if isinstance(inner, Normal):
            self._check_unbounded()
            return domains.normal_domain(inner.mean, inner.sd, q)
        if isinstance(inner, Uniform | LogUniform):
            log = isinstance(inner, LogUniform)
            return domains.bounded_domain(self.lower, self.upper, integer=False, log=log, q=q)
        raise _no_domain(self, sampler)

    def _check_unbounded(self) -> None:
        """Ray's normal draws refuse a bound (but a bound of 0, which Ray's
        check reads as none)."""
        for name, bound in (("lower", self.lower), ("upper", self.upper)):
            if bound and math.isfinite(bound):
                raise InvalidFieldError(
                    f"Float.{name}", bound, "None: normal sampling does not allow a bound"
                )

    def _draw(self, sampler: Sampler, config: Any, size: int, draws: _Draws) -> Any:
        if isinstance(sampler, Quantized):
            q = sampler.q
            lattice = copy(self)
            lattice.lower = _grid_index(self.lower, q, np.ceil) * q
            lattice.upper = _grid_index(self.upper, q, np.floor) * q
            values = lattice._draw(sampler.sampler, config, size, draws)
            return [self.cast(value) for value in np.round(np.divide(values, q)) * q]
        if isinstance(sampler, Normal):
            self._check_unbounded()
            return draws.normal(sampler.mean, sampler.sd, size)
        if isinstance(sampler, LogUniform):
            _needs_positive_bounds(self.lower, self.upper)
            return np.exp(draws.uniform(np.log(self.lower), np.log(self.upper), size))
        if isinstance(sampler, Uniform):
            if not -math.inf < self.lower <= self.upper < math.inf:
                raise ValueError(f"Uniform needs finite bounds, got {self.domain_str}")
            return draws.uniform(self.lower, self.upper, size)
        raise _no_domain(self, sampler)


class Integer(_Bounded):
    """Integers from `lower` to `upper` (exclusive), drawn by `uniform()`
    or `loguniform()`, each `quantized(q)` (which includes `upper`)."""

    members: ClassVar[tuple[type, ...]] = _INTEGERS

    lower: int
    upper: int

    def __init__(self, lower: int, upper: int) -> None:
        self.lower = lower
        self.upper = upper

    def cast(self, value: Any) -> int:
        return int(value)

    def quantized(self, q: int) -> Integer:
        return _with_sampler(self, Quantized(self.get_sampler(), q), allow_override=True)

    def uniform(self) -> Integer:
        return _with_sampler(self, Uniform())

    def to_domain(self) -> domains.Domain:
        sampler = self.get_sampler()
        inner, q = _unquantized(sampler)
        if isinstance(inner, Uniform | LogUniform):
            log = isinstance(inner, LogUniform)
            return domains.bounded_domain(self.lower, self.upper, integer=True, log=log, q=q)
        raise _no_domain(self, sampler)

    def _draw(self, sampler: Sampler, config: Any, size: int, draws: _Draws) -> Any:
        if isinstance(sampler, Quantized):
            # Ray draws the index of a multiple of q, each equally likely;
            # upper is exclusive for q == 1 only.
            q = sampler.q
            low = int(_grid_index(self.lower, q, np.ceil))
            high = int(_grid_index(self.upper, q, np.floor))
            if high < low:
                raise ValueError(
                    f"There is no multiple of the quantization factor q={q} between the "
                    f"bounds {self.lower} and {self.upper} of this domain, so it has no "
                    "values to sample."
                )
            indices = Integer(low, high + (0 if q == 1 else 1))
            drawn = indices._draw(sampler.sampler, config, size, draws)
            return [self.cast(value) for value in np.multiply(drawn, q)]
        if isinstance(sampler, LogUniform):
            _needs_positive_bounds(self.lower, self.upper)
            exponents = draws.uniform(np.log(self.lower), np.log(self.upper), size)
            return np.floor(np.exp(exponents)).astype(int)
        if isinstance(sampler, Uniform):
            return draws.integers(self.lower, self.upper, size)
        raise _no_domain(self, sampler)


class Categorical(Domain):
    """One of `categories`, drawn by `uniform()`, or each in turn, `grid()`.
    In a param space the categories may be objects, as with `tune.choice`
    and `tune.grid_search` (`param_value`)."""

    members: ClassVar[tuple[type, ...]] = (domains.Choice,)

    def __init__(self, categories: Sequence[Any]) -> None:
        self.categories = list(categories)

    def uniform(self) -> Categorical:
        return _with_sampler(self, Uniform())

    def grid(self) -> Categorical:
        return _with_sampler(self, Grid())

    def __len__(self) -> int:
        return len(self.categories)

    def __getitem__(self, item: int) -> Any:
        return self.categories[item]

    def is_valid(self, value: Any) -> bool:
        return value in self.categories

    @property
    def domain_str(self) -> str:
        return f"{self.categories}"

    def to_domain(self) -> domains.Domain:
        if self.is_grid():
            return domains.grid_search(self.categories)
        if isinstance(self.get_sampler(), Uniform):
            return domains.choice(self.categories)
        raise _no_domain(self, self.get_sampler())

    def _draw(self, sampler: Sampler, config: Any, size: int, draws: _Draws) -> Any:
        if isinstance(sampler, Grid):
            raise RuntimeError("Do not call `sample()` on grid.")
        if isinstance(sampler, Uniform):
            return [self.categories[index] for index in draws.choice(len(self.categories), size)]
        raise _no_domain(self, sampler)


class Function(Domain):
    """A value computed by `func`, of the config or of nothing."""

    members: ClassVar[tuple[type, ...]] = (domains.SampleFrom,)
    default_sampler_cls: ClassVar[type[Sampler]] = BaseSampler

    def __init__(self, func: Callable[..., Any]) -> None:
        signature = inspect.signature(func)
        self.pass_config = _binds(signature, 1)
        if not self.pass_config and not _binds(signature, 0):
            raise ValueError(
                "The function passed to a `Function` parameter must be callable with either "
                "0 or 1 parameters."
            )
        self.func = func

    def is_function(self) -> bool:
        return True

    def is_valid(self, value: Any) -> bool:
        return True  # the function's values are the user's to define

    @property
    def domain_str(self) -> str:
        return f"{self.func}()"

    def to_domain(self) -> domains.Domain:
        return domains.SampleFrom(self.func)

    def _draw(self, sampler: Sampler, config: Any, size: int, draws: _Draws) -> Any:
        if not self.pass_config:
            return [self.func() for _ in range(size)]
        configs = config if isinstance(config, list) else [config] * size
        return [self.func(_view(configs[index])) for index in range(size)]


def _view(config: Any) -> Any:
    """The config as a `sample_from` function reads it (`config["a"]`,
    `config.a` or Ray's `spec.config.a`)."""
    if isinstance(config, dict):
        return ConfigView(config, (), (), Probe())
    return config


def _binds(signature: inspect.Signature, count: int) -> bool:
    try:
        signature.bind(*([{}] * count))
    except TypeError:
        return False
    return True


_D = TypeVar("_D", bound="Domain")


def _with_sampler(domain: _D, sampler: Sampler, *, allow_override: bool = False) -> _D:
    """A copy of `domain` drawing with `sampler` (Ray's domains are copied,
    never changed, by their sampler methods)."""
    new = copy(domain)
    new.set_sampler(sampler, allow_override=allow_override)
    return new


def _no_domain(domain: Domain, sampler: Sampler) -> InvalidFieldError:
    return InvalidFieldError(
        f"{type(domain).__name__}.sampler",
        sampler,
        "a sampler this domain draws with (uniform, loguniform, normal, quantized once, grid)",
    )


def param_value(value: object) -> object:
    """`value` as a param space holds it: a hand-built domain as the domain
    it stands for, and a `Categorical` over objects as `tune.choice` and
    `tune.grid_search` over objects are (the `Tuner` keeps the objects)."""
    if isinstance(value, DomainBuilder) and isinstance(value, Categorical):
        if value.is_grid():
            return object_values.grid_search(value.categories)
        return object_values.choice(value.categories)
    return built(value)


__all__ = [
    "BaseSampler",
    "Categorical",
    "Domain",
    "Float",
    "Function",
    "Grid",
    "Integer",
    "LogUniform",
    "Normal",
    "Quantized",
    "RandomState",
    "Sampler",
    "Uniform",
    "choice",
    "lograndint",
    "loguniform",
    "param_value",
    "qlograndint",
    "qloguniform",
    "qrandint",
    "qrandn",
    "quniform",
    "randint",
    "randn",
    "sample_from",
    "uniform",
]
