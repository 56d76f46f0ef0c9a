"""Search-space domains: where each hyperparameter's value comes from.

Invariants
- A domain is a frozen msgspec struct, tagged so that a whole space
  serializes, and validated on construction (and therefore on decoding): a
  domain that exists can be sampled. Numeric bounds are stored as the type
  the domain samples (floats for float domains), so a decoded domain equals
  the one that was encoded and samples the same values.
- Sampling is pure: `sample(rng)` returns the advanced generator with the
  value, and the same generator state always gives the same value.
- Every sampled value lies in its domain (`is_valid` says so). Floating-point
  steps that can overshoot a bound by an ulp (exp of a log, k * q) are
  clamped to [low, high].
- Values are JSON. Choice categories and grid values are plain JSON, copied
  on the way in and on the way out, so no config shares a list with the
  space or with another config. Domains cannot nest inside them (Ray
  resolves such nested domains; here they are rejected with an error).
- Everything encodes with msgspec except a `SampleFrom` holding its Python
  callable; `without_function` keeps its place without it, which is what a
  searcher holds (the shell keeps the function and logs its values).
- A `DomainBuilder` (Ray's hand-built `Float(0, 1).uniform()`, a mutable
  user object) is never kept: wherever a space is read it is replaced by
  the domain it stands for (`built`), so only these structs are logged.

Semantics follow Ray Tune's `tune.search.sample`, with these documented
choices:
- uniform(low, high) draws from [low, high); low > high is rejected (Ray
  does not check). loguniform is log-uniform in [low, high]; `base` is kept
  for Ray's signature but, as in Ray (which deprecated it), does not change
  the distribution, which is the same in every base.
- quniform / qloguniform draw like Ray: the continuous value on the lattice
  bounds [k_lo * q, k_hi * q], rounded to the nearest multiple of q (so both
  bounds are reachable, each with half the weight of an inner point). As in
  Ray, low and high must be multiples of q.
- randint(low, high) is uniform on the integers of [low, high): high is
  exclusive and low < high is required, as in Ray/numpy.
- qrandint(low, high, q) is uniform on the multiples of q in [low, high],
  both ends inclusive. Ray documents exactly this but draws
  round(randint(lo, hi) / q) * q, which gives its end points less weight
  and, for q == 1, never returns high; we implement the documented intent.
- randn(mean, sd) accepts sd == 0 (a constant); Ray asserts sd > 0.
  qrandn(mean, sd, q) rounds a normal draw to the nearest multiple of q.
- lograndint(low, high) is log-uniform on the integers of [low, high): the
  floor of a log-uniform float, so high is exclusive, as in Ray (low >= 1).
- qlograndint(low, high, q) is the multiple of q nearest a log-uniform draw
  between the multiples of q that bound [low, high], both ends inclusive, as
  Ray documents (Ray's q == 1 falls back to lograndint and excludes high;
  like qrandint, we implement the documented bound for every q).

Why one module of over 400 lines: each domain Ray Tune names (uniform to
qlograndint, randn, choice, grid_search, sample_from) is a short struct that
validates and samples itself, all held to the invariants above through one
`_Domain` base, and the tagged union that lets a whole space serialize names
them in one place.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias, overload

import msgspec

import tunecore.core.rng as draw
from tunecore.core.rng import Rng
from tunecore.core.search.view import ConfigView
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.model.numbers import is_finite_number, is_int

_force = msgspec.structs.force_setattr


# -- validation helpers ---------------------------------------------------------------------------


def _number(where: str, name: str, value: object) -> float:
    """A finite real number as a float (booleans are flags, not numbers)."""
    if not is_finite_number(value):
        raise InvalidFieldError(f"{where}.{name}", value, "a finite number")
    return float(value)


def _integer(where: str, name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidFieldError(f"{where}.{name}", value, "an integer")
    return value


def _on_lattice(where: str, name: str, value: float, q: float) -> int:
    """The k with value == k * q (up to rounding), as Ray requires of bounds."""
    ratio = value / q
    if not math.isclose(ratio, round(ratio)):
        raise InvalidFieldError(f"{where}.{name}", value, f"a multiple of q={q!r}")
    return round(ratio)


_JSON_SCALARS: tuple[type[bool | int | float | str], ...] = (bool, int, float, str)


OBJECTS_ELSEWHERE = (
    "; a searcher's space is logged, so objects are accepted only in "
    "Tuner(param_space=...), whose log holds a placeholder in their place, "
    "or given to the trainable with tune.with_parameters(trainable, name=obj)"
)
"""What `plain_json` adds for an object in a search space (`otherwise`)."""


def plain_json(where: str, value: object, *, otherwise: str = "") -> JsonValue:
    """A deep copy of `value` as plain JSON: tuples become lists, and a
    subclass of a JSON scalar the value it holds (numpy's `float64` and
    `str_` are `float` and `str` subclasses, which the log's encoder
    refuses); anything else (a search domain, a set, an object) is an
    error naming where it is, and for an object, `otherwise` (what to do
    instead, appended to what was expected)."""
    if value is None or type(value) in _JSON_SCALARS:
        return value  # type: ignore[return-value]
    for scalar in _JSON_SCALARS:
        if isinstance(value, scalar):
            return scalar(value)
    if isinstance(value, list | tuple):
        return [
            plain_json(f"{where}[{i}]", item, otherwise=otherwise) for i, item in enumerate(value)
        ]
    if isinstance(value, dict):
        copied: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidFieldError(f"{where}[{key!r}]", key, "a string key")
            copied[key] = plain_json(f"{where}[{key!r}]", item, otherwise=otherwise)
        return copied
    if isinstance(value, (*DOMAIN_TYPES, DomainBuilder)):
        raise InvalidFieldError(
            where, value, "a plain JSON value: search domains do not nest inside choices or grids"
        )
    raise InvalidFieldError(
        where, value, f"a JSON value (None, bool, int, float, str, list, dict){otherwise}"
    )


def copy_json(value: JsonValue) -> JsonValue:
    """A deep copy of a value already known to be plain JSON."""
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    return value


def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def _is_multiple(value: float, q: float) -> bool:
    ratio = value / q
    return math.isclose(ratio, round(ratio), rel_tol=1e-9, abs_tol=1e-9)


# -- sampling domains ------------------------------------------------------------------------------


class _Domain(msgspec.Struct, frozen=True):
    """What every domain does when it is built or decoded: `check` itself,
    naming its fields after its class (`Uniform.low`)."""

    def __post_init__(self) -> None:
        self.check(type(self).__name__)

    def check(self, where: str) -> None:
        """Validate (naming fields as `where.field`) and normalise in place."""


class Uniform(_Domain, frozen=True, tag=True):
    """A float drawn uniformly from [low, high)."""

    low: float
    high: float

    def check(self, where: str) -> None:
        """Validate (naming fields as `where.low` ...) and store floats."""
        low = _number(where, "low", self.low)
        high = _number(where, "high", self.high)
        if low > high:
            raise InvalidFieldError(f"{where}.high", self.high, f"a number >= low={low!r}")
        _force(self, "low", low)
        _force(self, "high", high)

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        rng, value = draw.uniform(rng, self.low, self.high)
        return rng, _clamp(value, self.low, self.high)

    def is_valid(self, value: JsonValue) -> bool:
        return is_finite_number(value) and self.low <= value <= self.high


class QUniform(_Domain, frozen=True, tag=True):
    """A float drawn uniformly from [low, high] and rounded to a multiple of q."""

    low: float
    high: float
    q: float

    def check(self, where: str) -> None:
        low = _number(where, "low", self.low)
        high = _number(where, "high", self.high)
        q = _number(where, "q", self.q)
        if q <= 0:
            raise InvalidFieldError(f"{where}.q", self.q, "a number > 0")
        if low > high:
            raise InvalidFieldError(f"{where}.high", self.high, f"a number >= low={low!r}")
        _on_lattice(where, "low", low, q)
        _on_lattice(where, "high", high, q)
        _force(self, "low", low)
        _force(self, "high", high)
        _force(self, "q", q)

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        k_low = round(self.low / self.q)
        k_high = round(self.high / self.q)
        rng, position = draw.uniform(rng, float(k_low), float(k_high))
        return rng, _clamp(round(position) * self.q, self.low, self.high)

    def is_valid(self, value: JsonValue) -> bool:
        if not is_finite_number(value):
            return False
        number = float(value)
        return self.low <= number <= self.high and _is_multiple(number, self.q)


class LogUniform(_Domain, frozen=True, tag=True):
    """A float whose logarithm is uniform: every order of magnitude in
    [low, high] is equally likely. `base` does not change the distribution."""

    low: float
    high: float
    base: float = 10.0

    def check(self, where: str) -> None:
        low, high = _log_bounds(where, self.low, self.high)
        base = _log_base(where, self.base)
        _force(self, "low", low)
        _force(self, "high", high)
        _force(self, "base", base)

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        rng, exponent = draw.uniform(rng, math.log(self.low), math.log(self.high))
        return rng, _clamp(math.exp(exponent), self.low, self.high)

    def is_valid(self, value: JsonValue) -> bool:
        return is_finite_number(value) and self.low <= value <= self.high


class QLogUniform(_Domain, frozen=True, tag=True):
    """A log-uniform float rounded to a multiple of q, within [low, high]."""

    low: float
    high: float
    q: float
    base: float = 10.0

    def check(self, where: str) -> None:
        low, high = _log_bounds(where, self.low, self.high)
        q = _number(where, "q", self.q)
        if q <= 0:
            raise InvalidFieldError(f"{where}.q", self.q, "a number > 0")
        _on_lattice(where, "low", low, q)
        _on_lattice(where, "high", high, q)
        base = _log_base(where, self.base)
        _force(self, "low", low)
        _force(self, "high", high)
        _force(self, "q", q)
        _force(self, "base", base)

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        lattice_low = round(self.low / self.q) * self.q
        lattice_high = round(self.high / self.q) * self.q
        rng, exponent = draw.uniform(rng, math.log(lattice_low), math.log(lattice_high))
        value = round(math.exp(exponent) / self.q) * self.q
        return rng, _clamp(value, self.low, self.high)

    def is_valid(self, value: JsonValue) -> bool:
        if not is_finite_number(value):
            return False
        number = float(value)
        return self.low <= number <= self.high and _is_multiple(number, self.q)


def _log_bounds(where: str, low_value: object, high_value: object) -> tuple[float, float]:
    low = _number(where, "low", low_value)
    high = _number(where, "high", high_value)
    if low <= 0:
        raise InvalidFieldError(f"{where}.low", low_value, "a number > 0 (its log is taken)")
    if high <= 0:
        raise InvalidFieldError(f"{where}.high", high_value, "a number > 0 (its log is taken)")
    if low > high:
        raise InvalidFieldError(f"{where}.high", high_value, f"a number >= low={low!r}")
    return low, high


def _log_base(where: str, value: object) -> float:
    base = _number(where, "base", value)
    if base <= 0 or base == 1:
        raise InvalidFieldError(f"{where}.base", value, "a number > 0 other than 1")
    return base


class RandInt(_Domain, frozen=True, tag=True):
    """An integer drawn uniformly from [low, high): high is exclusive."""

    low: int
    high: int

    def check(self, where: str) -> None:
        low = _integer(where, "low", self.low)
        high = _integer(where, "high", self.high)
        if low >= high:
            raise InvalidFieldError(
                f"{where}.high", high, f"an integer > low={low} (high is exclusive)"
            )

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        rng, offset = draw.integer_below(rng, self.high - self.low)
        return rng, self.low + offset

    def is_valid(self, value: JsonValue) -> bool:
        return is_int(value) and self.low <= value < self.high


def _check_multiples(where: str, low: object, high: object, q: object) -> None:
    """Integer bounds low <= high and a step q >= 1 that leaves at least one
    multiple of q between them (both ends inclusive)."""
    low = _integer(where, "low", low)
    high = _integer(where, "high", high)
    q = _integer(where, "q", q)
    if q < 1:
        raise InvalidFieldError(f"{where}.q", q, "an integer >= 1")
    if low > high:
        raise InvalidFieldError(f"{where}.high", high, f"an integer >= low={low}")
    if -(-low // q) > high // q:
        raise InvalidFieldError(
            f"{where}.high", high, f"a bound that leaves a multiple of q={q} in [{low}, high]"
        )


class QRandInt(_Domain, frozen=True, tag=True):
    """A multiple of q drawn uniformly from [low, high], both ends inclusive."""

    low: int
    high: int
    q: int = 1

    def check(self, where: str) -> None:
        _check_multiples(where, self.low, self.high, self.q)

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        k_low = -(-self.low // self.q)
        k_high = self.high // self.q
        rng, offset = draw.integer_below(rng, k_high - k_low + 1)
        return rng, (k_low + offset) * self.q

    def is_valid(self, value: JsonValue) -> bool:
        return is_int(value) and self.low <= value <= self.high and value % self.q == 0


class Choice(_Domain, frozen=True, tag=True):
    """One of `categories`, each equally likely."""

    categories: list[JsonValue]

    def check(self, where: str) -> None:
        _force(self, "categories", _non_empty(where, "categories", self.categories))

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        rng, index = draw.integer_below(rng, len(self.categories))
        return rng, copy_json(self.categories[index])

    def is_valid(self, value: JsonValue) -> bool:
        return any(_same(value, category) for category in self.categories)


class RandN(_Domain, frozen=True, tag=True):
    """A float drawn from the normal distribution N(mean, sd^2)."""

    mean: float = 0.0
    sd: float = 1.0

    def check(self, where: str) -> None:
        mean = _number(where, "mean", self.mean)
        sd = _number(where, "sd", self.sd)
        if sd < 0:
            raise InvalidFieldError(f"{where}.sd", self.sd, "a number >= 0")
        _force(self, "mean", mean)
        _force(self, "sd", sd)

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        return draw.normal(rng, self.mean, self.sd)

    def is_valid(self, value: JsonValue) -> bool:
        return is_finite_number(value)


class QRandN(_Domain, frozen=True, tag=True):
    """A normal draw N(mean, sd^2) rounded to the nearest multiple of q."""

    mean: float
    sd: float
    q: float

    def check(self, where: str) -> None:
        mean = _number(where, "mean", self.mean)
        sd = _number(where, "sd", self.sd)
        q = _number(where, "q", self.q)
        if sd < 0:
            raise InvalidFieldError(f"{where}.sd", self.sd, "a number >= 0")
        if q <= 0:
            raise InvalidFieldError(f"{where}.q", self.q, "a number > 0")
        _force(self, "mean", mean)
        _force(self, "sd", sd)
        _force(self, "q", q)

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        rng, value = draw.normal(rng, self.mean, self.sd)
        return rng, float(round(value / self.q) * self.q)

    def is_valid(self, value: JsonValue) -> bool:
        return is_finite_number(value) and _is_multiple(float(value), self.q)


class LogRandInt(_Domain, frozen=True, tag=True):
    """An integer in [low, high) whose logarithm is about uniform: the floor
    of a log-uniform float, as Ray draws it. High is exclusive."""

    low: int
    high: int
    base: float = 10.0

    def check(self, where: str) -> None:
        low = _integer(where, "low", self.low)
        high = _integer(where, "high", self.high)
        if low < 1:
            raise InvalidFieldError(f"{where}.low", low, "an integer >= 1 (its log is taken)")
        if low >= high:
            raise InvalidFieldError(
                f"{where}.high", high, f"an integer > low={low} (high is exclusive)"
            )
        _force(self, "base", _log_base(where, self.base))

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        rng, exponent = draw.uniform(rng, math.log(self.low), math.log(self.high))
        return rng, min(max(math.floor(math.exp(exponent)), self.low), self.high - 1)

    def is_valid(self, value: JsonValue) -> bool:
        return is_int(value) and self.low <= value < self.high


class QLogRandInt(_Domain, frozen=True, tag=True):
    """A multiple of q in [low, high] (both inclusive) drawn log-uniformly:
    a log-uniform float between the multiples of q that bound the range,
    rounded to the nearest multiple."""

    low: int
    high: int
    q: int
    base: float = 10.0

    def check(self, where: str) -> None:
        low = _integer(where, "low", self.low)
        if low < 1:
            raise InvalidFieldError(f"{where}.low", low, "an integer >= 1 (its log is taken)")
        _check_multiples(where, low, self.high, self.q)
        _force(self, "base", _log_base(where, self.base))

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]:
        k_low = -(-self.low // self.q)
        k_high = self.high // self.q
        rng, exponent = draw.uniform(rng, math.log(k_low), math.log(k_high))
        return rng, min(max(round(math.exp(exponent)), k_low), k_high) * self.q

    def is_valid(self, value: JsonValue) -> bool:
        return is_int(value) and self.low <= value <= self.high and value % self.q == 0


# -- grid and functions ----------------------------------------------------------------------------


class GridSearch(_Domain, frozen=True, tag=True):
    """Every one of `values`, in order: the generator crosses all grids."""

    values: list[JsonValue]

    def check(self, where: str) -> None:
        _force(self, "values", _non_empty(where, "values", self.values))

    def is_valid(self, value: JsonValue) -> bool:
        return any(_same(value, item) for item in self.values)


class SampleFrom(_Domain, frozen=True, tag=True, omit_defaults=True):
    """A value computed from the rest of the config by a Python function.

    The function takes the partly resolved config (a `ConfigView`: `cfg["lr"]`,
    `cfg.lr` and Ray's `spec.config.lr` all work) or no argument, and returns
    a JSON value. It is resolved after grid and random values, and may draw
    randomness of its own (`np.random.uniform(...)`, as Ray's examples do):
    its value is logged, never computed again.

    `func` is typed `object` because msgspec cannot describe a callable. A
    searcher in the core holds the domain `without_function` (func None):
    that encodes, and the shell, which keeps the user's functions, computes
    the values the searcher asks for (`ValuesWanted`). `import_path`
    ("module:qualname", empty for lambdas and nested functions) and
    `takes_config` are derived from the function and kept without it.
    """

    func: object = None
    import_path: str = ""
    takes_config: bool = True

    def check(self, where: str) -> None:
        func = self.func
        if func is None:
            return  # a function's place, as a searcher holds it
        if not callable(func):
            raise InvalidFieldError(f"{where}.func", func, "a callable")
        try:
            signature = inspect.signature(func)
        except (TypeError, ValueError):
            takes_config = True
        else:
            takes_config = _binds(signature, 1)
            if not takes_config and not _binds(signature, 0):
                raise InvalidFieldError(
                    f"{where}.func", func, "a function of one argument (the config) or none"
                )
        module = getattr(func, "__module__", None)
        qualname = getattr(func, "__qualname__", None)
        path = ""
        if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
            path = f"{module}:{qualname}"
        _force(self, "takes_config", takes_config)
        _force(self, "import_path", path)

    def without_function(self) -> SampleFrom:
        """This domain's place without the function (it encodes)."""
        return SampleFrom(None, self.import_path, self.takes_config)

    def call(self, config: ConfigView) -> object:
        """Run the function on the partly resolved config (may raise
        `UnresolvedValueError`, which the resolver handles)."""
        func = self.func
        if not callable(func):
            raise InvalidFieldError(
                "SampleFrom.func", func, "the function (it is not stored with the searcher)"
            )
        return func(config) if self.takes_config else func()


def _binds(signature: inspect.Signature, count: int) -> bool:
    try:
        signature.bind(*([None] * count))
    except TypeError:
        return False
    return True


def _non_empty(where: str, name: str, value: object) -> list[JsonValue]:
    if not isinstance(value, list | tuple) or not value:
        raise InvalidFieldError(f"{where}.{name}", value, "a non-empty list")
    copied = plain_json(f"{where}.{name}", value, otherwise=OBJECTS_ELSEWHERE)
    assert isinstance(copied, list)
    return copied


def _same(value: JsonValue, other: JsonValue) -> bool:
    """Equality that tells True from 1 (a config value keeps its type)."""
    return type(value) is type(other) and value == other


SamplingDomain: TypeAlias = (
    Uniform
    | QUniform
    | LogUniform
    | QLogUniform
    | RandInt
    | QRandInt
    | LogRandInt
    | QLogRandInt
    | Choice
    | RandN
    | QRandN
)
"""Domains drawn with the generator's `Rng`."""

Domain: TypeAlias = SamplingDomain | GridSearch | SampleFrom
"""Everything that may stand for a value in a param space."""

SAMPLING_TYPES = (
    Uniform,
    QUniform,
    LogUniform,
    QLogUniform,
    RandInt,
    QRandInt,
    LogRandInt,
    QLogRandInt,
    Choice,
    RandN,
    QRandN,
)
DOMAIN_TYPES = (*SAMPLING_TYPES, GridSearch, SampleFrom)

_BOUNDED: dict[tuple[bool, bool], tuple[Callable[..., Domain], Callable[..., Domain]]] = {
    (False, False): (Uniform, QUniform),
    (False, True): (LogUniform, QLogUniform),
    (True, False): (RandInt, QRandInt),
    (True, True): (LogRandInt, QLogRandInt),
}
"""(integer, log) -> the domain classes without and with a quantization."""


class DomainBuilder:
    """A user-facing object that stands for a domain: Ray's domain classes
    built by hand (`Float(0, 1).uniform()`, `tunecore.search.sample`).
    They are Ray's mutable objects with Ray's methods; a space reader takes
    `to_domain()` in their place, which validates them as the domain would.

    Not an `abc.ABC`: the user-facing classes count tunecore's domains as
    their instances (`isinstance(tune.uniform(0, 1), Float)`), and an ABC
    would ask them whether a domain is a `DomainBuilder` too."""

    def to_domain(self) -> Domain:
        """The domain this object stands for (an error naming the field
        when it cannot be one)."""
        raise NotImplementedError(f"{type(self).__name__}.to_domain")


def bounded_domain(low: float, high: float, *, integer: bool, log: bool, q: float | None) -> Domain:
    """The domain of Ray's `Float` (`integer` False) or `Integer` between
    `low` and `high`, drawn uniformly or (`log`) log-uniformly, and
    quantized by `q` unless it is None: how a domain built by hand, with
    tunecore's classes or Ray's, reads as a domain of `tune.*`."""
    plain, quantized = _BOUNDED[integer, log]
    return plain(low, high) if q is None else quantized(low, high, q)


def normal_domain(mean: float, sd: float, q: float | None) -> Domain:
    """The domain of Ray's `Float().normal(mean, sd)`, quantized by `q`
    unless it is None."""
    return RandN(mean, sd) if q is None else QRandN(mean, sd, q)


# -- Ray's constructor functions -------------------------------------------------------------------


def uniform(lower: float, upper: float) -> Uniform:
    """A float uniformly in [lower, upper)."""
    return Uniform(lower, upper)


def quniform(lower: float, upper: float, q: float) -> QUniform:
    """A float uniformly in [lower, upper], rounded to a multiple of q
    (rounding makes upper reachable). lower and upper must be multiples of q."""
    return QUniform(lower, upper, q)


def loguniform(lower: float, upper: float, base: float = 10) -> LogUniform:
    """A float log-uniformly in [lower, upper] (both > 0)."""
    return LogUniform(lower, upper, base)


def qloguniform(lower: float, upper: float, q: float, base: float = 10) -> QLogUniform:
    """A log-uniform float rounded to a multiple of q, within [lower, upper]."""
    return QLogUniform(lower, upper, q, base)


def randint(lower: int, upper: int) -> RandInt:
    """An integer uniformly in [lower, upper): upper is exclusive."""
    return RandInt(lower, upper)


def qrandint(lower: int, upper: int, q: int = 1) -> QRandInt:
    """A multiple of q uniformly in [lower, upper]: upper is inclusive."""
    return QRandInt(lower, upper, q)


def lograndint(lower: int, upper: int, base: float = 10) -> LogRandInt:
    """An integer log-uniformly in [lower, upper): upper is exclusive."""
    return LogRandInt(lower, upper, base)


def qlograndint(lower: int, upper: int, q: int, base: float = 10) -> QLogRandInt:
    """A multiple of q log-uniformly in [lower, upper]: upper is inclusive."""
    return QLogRandInt(lower, upper, q, base)


def choice(categories: Sequence[JsonValue]) -> Choice:
    """One of the categories, uniformly."""
    return Choice(listed("choice(categories)", categories))


def grid_search(values: Sequence[JsonValue]) -> GridSearch:
    """Every value, crossed with every other grid in the space."""
    return GridSearch(listed("grid_search(values)", values))


def listed(where: str, values: object) -> list[Any]:
    """`values` (a list, a tuple, any iterable) as a list; a string or a
    single value is an error naming `where` (a string would be split into
    letters, a number is no list)."""
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise InvalidFieldError(where, values, "a list of values")
    return list(values)


def randn(mean: float = 0.0, sd: float = 1.0) -> RandN:
    """A float from the normal distribution with this mean and standard deviation."""
    return RandN(mean, sd)


def qrandn(mean: float, sd: float, q: float) -> QRandN:
    """A normal draw with this mean and standard deviation, rounded to a multiple of q."""
    return QRandN(mean, sd, q)


@overload
def sample_from(func: Callable[[ConfigView], object]) -> SampleFrom: ...
@overload
def sample_from(func: Callable[[], object]) -> SampleFrom: ...
def sample_from(func: Callable[[ConfigView], object] | Callable[[], object]) -> SampleFrom:
    """A value computed from the partly resolved config, e.g.
    `sample_from(lambda spec: spec.config.lr * 2)`."""
    if not callable(func):
        raise InvalidFieldError("SampleFrom.func", func, "a callable")
    return SampleFrom(func)
