"""A param space given as a config object of a library built on Ray Tune,
or holding Ray Tune's own domains (`tunecore.search.ray_domains`).

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

from tunecore.core.search.domains import GridSearch
from tunecore.model.foreign_class import foreign_base
from tunecore.search.ray_domains import adopt_ray_domains


def is_ray_config(value: object) -> bool:
    """Whether `value` is an instance of Ray Tune's `_Config`."""
    return foreign_base(type(value), "ray.tune.tune", ("_Config",)) is not None


def as_param_space(param_space: object) -> object:
    """`param_space.to_dict()` for Ray's `_Config`, else `param_space`; in
    either, Ray Tune's own domains as tunecore's (`adopt_ray_domains`), and
    a grid over whole configs as Ray's dict spelling of it."""
    if is_ray_config(param_space):
        param_space = param_space.to_dict()  # type: ignore[attr-defined]
    param_space = adopt_ray_domains(param_space)
    if isinstance(param_space, GridSearch):
        return {"grid_search": param_space.values}
    return param_space
