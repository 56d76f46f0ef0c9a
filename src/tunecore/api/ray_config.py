"""A param space given as a config object of a library built on Ray Tune,
or holding Ray Tune's own domains (`tunecore.core.search.built`).

Ray's `Tuner(param_space=)` and `tune.run(config=)` take, besides a dict,
any instance of Ray's private `ray.tune.tune._Config` (one method,
`to_dict()`), and use the dict it returns. RLlib's `AlgorithmConfig` is
one: its Tune examples pass `PPOConfig()...` as the space, `tune.grid_search`
values set through its builder methods. The class is found by name in the
object's MRO (tunecore never imports `ray.tune`); any other object stays
as it is, for the Tuner's own check to refuse, as Ray refuses it.

A space that is itself `grid_search([{...}, {...}])` (ready-made configs,
one trial each) is a dict in Ray, whose `grid_search` returns
`{"grid_search": [...]}`; it becomes that dict here, which the variant
generator reads as a grid over whole configs.
"""

from __future__ import annotations

from tunecore.core.search.built import adopt_ray_domains
from tunecore.core.search.domains import GridSearch
from tunecore.model.foreign_class import foreign_base
from tunecore.search import object_values


def is_ray_config(value: object) -> bool:
    """Whether `value` is an instance of Ray Tune's `_Config`."""
    return foreign_base(type(value), "ray.tune.tune", ("_Config",)) is not None


def as_param_space(param_space: object) -> object:
    """`param_space.to_dict()` for Ray's `_Config`, else `param_space`; in
    either, Ray Tune's own domains as tunecore's (`adopt_ray_domains`), a
    `choice` or grid over objects as `tune.choice` and `tune.grid_search`
    over objects are (the Tuner keeps the objects), and a grid over whole
    configs as Ray's dict spelling of it."""
    if is_ray_config(param_space):
        param_space = param_space.to_dict()  # type: ignore[attr-defined]
    param_space = adopt_ray_domains(param_space, _categorical)
    if isinstance(param_space, GridSearch):
        return {"grid_search": param_space.values}
    return param_space


def _categorical(categories: list[object], grid: bool) -> object:
    if grid:
        return object_values.grid_search(categories)
    return object_values.choice(categories)
