"""A search space's value read as the domain it stands for, whoever built it.

Besides tunecore's immutable domains, a space may hold a domain built by
hand (`tunecore.search.sample`'s `Float(0, 1).uniform()`, a
`DomainBuilder`) or one of Ray Tune's own `ray.tune.search.sample` domains:
a library built on Ray Tune makes those in code no import rewriting reaches
(a package's preset spaces, RLlib's `AlgorithmConfig.to_dict()`, a module
of the user's that still imports `from ray import tune`). Wherever a space
is read (a param space, a searcher's own `space=`, PBT's and PB2's
`hyperparam_mutations`) each is taken as the domain of `tune.*` it stands
for: this is the one rule, so the three cannot differ.

Ray's domains are read from their public attributes (`lower`, `upper`,
`categories`, `func`, `get_sampler()` and the sampler's `mean`, `sd`, `q`,
`sampler`), their classes found by name in the object's MRO: tunecore never
imports `ray.tune`, and the pure core never imports Ray at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tunecore.core.search.domains import (
    DOMAIN_TYPES,
    DomainBuilder,
    SampleFrom,
    bounded_domain,
    choice,
    grid_search,
    normal_domain,
)
from tunecore.model import InvalidFieldError
from tunecore.model.foreign_class import foreign_base
from tunecore.model.storable import MAX_DEPTH

_RAY_MODULE = "ray.tune.search.sample"
_KINDS = ("Float", "Integer", "Categorical", "Function")
_DRAWS = ("Uniform", "LogUniform", "Normal", "Grid")

Categorical = Callable[[list[Any], bool], object]
"""How Ray's `Categorical` is read: its categories, and whether it is a
grid (else a choice), to the value a space holds in its place."""


def _plain_categorical(categories: list[Any], grid: bool) -> object:
    """A searcher's space and PBT's mutations are logged: plain JSON only."""
    return grid_search(categories) if grid else choice(categories)


def _ray_kind(value: object, kinds: tuple[str, ...]) -> str | None:
    """The name of the first of Ray's `kinds` classes `value` is an
    instance of, if any."""
    base = foreign_base(type(value), _RAY_MODULE, kinds)
    return None if base is None else base.__name__


def from_ray_domain(value: object, categorical: Categorical = _plain_categorical) -> object:
    """`value` as tunecore's domain when it is one of Ray Tune's own, else
    `value` unchanged. A `Categorical`'s categories are read first (Ray's
    domains among them too), then passed to `categorical`."""
    kind = _ray_kind(value, _KINDS)
    if kind is None:
        return value
    ray_domain: Any = value
    if kind == "Function":
        return SampleFrom(ray_domain.func)
    sampler: Any = ray_domain.get_sampler()
    q = None
    if _ray_kind(sampler, ("Quantized",)) is not None:
        q, sampler = sampler.q, sampler.sampler
    draw = _ray_kind(sampler, _DRAWS)
    if kind == "Categorical" and draw in ("Uniform", "Grid") and q is None:
        categories = [
            adopt_ray_domains(category, categorical) for category in ray_domain.categories
        ]
        return categorical(categories, draw == "Grid")
    if kind == "Float" and draw == "Normal":
        return normal_domain(sampler.mean, sampler.sd, q)
    if kind in ("Float", "Integer") and draw in ("Uniform", "LogUniform"):
        return bounded_domain(
            ray_domain.lower,
            ray_domain.upper,
            integer=kind == "Integer",
            log=draw == "LogUniform",
            q=q,
        )
    raise InvalidFieldError(
        f"ray.tune.search.sample.{kind}.sampler",
        ray_domain.get_sampler(),
        "a sampler this domain draws with (uniform, loguniform, normal, quantized once, grid)",
    )


def adopt_ray_domains(
    space: object, categorical: Categorical = _plain_categorical, depth: int = 0
) -> object:
    """`space` with each of Ray Tune's domains in it (in dicts, lists and
    tuples, down to the depth the event log stores) replaced by tunecore's;
    the containers keep their types, and a space without one is returned
    as it is. Deeper than `MAX_DEPTH` it is left as it is, for the log's
    check to refuse, naming the key (not a `RecursionError` here)."""
    if depth > MAX_DEPTH:
        return space
    if isinstance(space, Mapping):
        adopted = {
            key: adopt_ray_domains(value, categorical, depth + 1) for key, value in space.items()
        }
        changed = any(adopted[key] is not value for key, value in space.items())
        return adopted if changed else space
    if isinstance(space, list | tuple):
        items = [adopt_ray_domains(item, categorical, depth + 1) for item in space]
        if all(new is old for new, old in zip(items, space, strict=True)):
            return space
        return type(space)(items) if isinstance(space, tuple) else items
    return from_ray_domain(space, categorical)


def built(value: object) -> object:
    """`value`, or the domain it stands for when it is a `DomainBuilder`
    or one of Ray Tune's domains."""
    if isinstance(value, DomainBuilder):
        return value.to_domain()
    return from_ray_domain(value)


def is_domain(value: object) -> bool:
    """Whether `value` is a domain or `built` reads it as one (a searcher
    telling a Tune-style space from its own library's)."""
    return isinstance(value, (*DOMAIN_TYPES, DomainBuilder)) or _ray_kind(value, _KINDS) is not None
