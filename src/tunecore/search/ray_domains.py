"""Ray Tune's own domain objects in a param space, read as tunecore's.

A user's `tune.uniform(...)` is tunecore's once the script's imports are
rewritten, but a library built on Ray Tune builds its search spaces with
Ray's `ray.tune.search.sample` in code no rewriting reaches (a package's
preset spaces, RLlib's `AlgorithmConfig.to_dict()` holding what was set
through its builder methods). Ray samples such a domain for each trial;
passed on as an object it would reach every trial unsampled. Each is
rebuilt as this package's class of the same name (`sample.Float`,
`Integer`, `Categorical`, `Function`), from Ray's public attributes
(`lower`, `upper`, `categories`, `func`, `get_sampler()` and the
sampler's `mean`, `sd`, `q`), so it draws as that domain does. Ray's
classes are found by name in the object's MRO: tunecore never imports
`ray.tune`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tunecore.model.foreign_class import foreign_base
from tunecore.model.storable import MAX_DEPTH
from tunecore.search import sample

_RAY_MODULE = "ray.tune.search.sample"
_KINDS = ("Float", "Integer", "Categorical", "Function")


def _ray_kind(value: object, kinds: tuple[str, ...]) -> str | None:
    """The name of the first of Ray's `kinds` classes `value` is an
    instance of, if any."""
    base = foreign_base(type(value), _RAY_MODULE, kinds)
    return None if base is None else base.__name__


def _with_ray_sampler(domain: Any, ray_sampler: object) -> Any:
    """`domain` drawn as Ray's `ray_sampler` draws (Uniform, LogUniform,
    Normal or Grid, each possibly Quantized)."""
    kind = _ray_kind(ray_sampler, ("Quantized", "Uniform", "LogUniform", "Normal", "Grid"))
    if kind == "Quantized":
        inner = _with_ray_sampler(domain, ray_sampler.sampler)  # type: ignore[attr-defined]
        return inner.quantized(ray_sampler.q)  # type: ignore[attr-defined]
    if kind == "Uniform":
        return domain.uniform()
    if kind == "LogUniform":
        return domain.loguniform()
    if kind == "Normal":
        return domain.normal(ray_sampler.mean, ray_sampler.sd)  # type: ignore[attr-defined]
    if kind == "Grid":
        return domain.grid()
    raise ValueError(
        f"{ray_sampler!r} (the sampler of a Ray Tune domain in the param space) is not one "
        "of Ray's Uniform, LogUniform, Normal, Grid or Quantized"
    )


def from_ray_domain(value: object) -> object:
    """`value` as tunecore's domain when it is one of Ray Tune's own, else
    `value` unchanged."""
    kind = _ray_kind(value, _KINDS)
    if kind is None:
        return value
    ray_domain: Any = value
    if kind == "Function":
        return sample.Function(ray_domain.func)
    if kind == "Categorical":
        categories = [adopt_ray_domains(category) for category in ray_domain.categories]
        domain: Any = sample.Categorical(categories)
    elif kind == "Float":
        domain = sample.Float(ray_domain.lower, ray_domain.upper)
    else:
        domain = sample.Integer(ray_domain.lower, ray_domain.upper)
    return _with_ray_sampler(domain, ray_domain.get_sampler())


def adopt_ray_domains(space: object, depth: int = 0) -> object:
    """`space` with each of Ray Tune's domains in it (in dicts, lists and
    tuples, down to the depth the event log stores) replaced by tunecore's;
    the containers keep their types, and a space without one is returned
    as it is. Deeper than `MAX_DEPTH` it is left as it is, for the log's
    check to refuse, naming the key (not a `RecursionError` here)."""
    if depth > MAX_DEPTH:
        return space
    if isinstance(space, Mapping):
        adopted = {key: adopt_ray_domains(value, depth + 1) for key, value in space.items()}
        changed = any(adopted[key] is not value for key, value in space.items())
        return adopted if changed else space
    if isinstance(space, list | tuple):
        items = [adopt_ray_domains(item, depth + 1) for item in space]
        if all(new is old for new, old in zip(items, space, strict=True)):
            return space
        return type(space)(items) if isinstance(space, tuple) else items
    return from_ray_domain(space)
