"""PBT's mutated keys that a param space leaves out, sampled like the rest.

Ray's `PopulationBasedTraining` fills each key of `hyperparam_mutations`
that a new trial's config lacks (`_fill_config` in `on_trial_add`), so
`PopulationBasedTraining(hyperparam_mutations={"lr": [...]})` with no
`param_space` gives every trial an `lr`, as Ray's scheduler docs rely on.
A tunecore scheduler never changes a config (it is pure, and the config is
logged as the searcher made it), so the Tuner adds those keys to the param
space instead, as the searcher then samples them: a list of categories as
`choice`, a search domain as it is, a function as `sample_from`. Ray's
`PB2` fills its `hyperparam_bounds` the same way, uniformly between the
bounds (`uniform`). Ray's `PopulationBasedTrainingReplay` sets its trial's
config to the schedule's first one (with a warning when the param space
had one), or keeps the param space when the schedule is empty: here that
config is the param space.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from tunecore.core.schedulers.pb2 import PB2
from tunecore.core.schedulers.pbt import MutationFunction, PopulationBasedTraining
from tunecore.core.schedulers.pbt_replay import PopulationBasedTrainingReplay
from tunecore.core.search.domains import choice, sample_from, uniform
from tunecore.model import InvalidFieldError

logger = logging.getLogger(__name__)


def with_mutated_keys(space: Mapping[str, object], scheduler: object) -> dict[str, object]:
    """`space` with a sampler at every path of `scheduler`'s mutations it
    lacks (`scheduler` a PBT or PB2; any other leaves `space` as it is)."""
    filled = dict(space)
    if isinstance(scheduler, PopulationBasedTrainingReplay):
        return _replayed_space(filled, scheduler)
    if not isinstance(scheduler, PopulationBasedTraining):
        return filled
    for path, spec in scheduler.hyperparam_mutations.items():
        *parents, leaf = path.split("/")
        level = filled
        for name in parents:
            inner = level.get(name)
            if inner is None:
                inner = level[name] = {}
            elif isinstance(inner, dict):
                inner = level[name] = dict(inner)
            else:
                break  # a value where PBT expects a dict: PBT reports it as it explores
            level = inner
        else:
            if leaf not in level:
                level[leaf] = _sampler(spec, bounded=isinstance(scheduler, PB2))
    return filled


def _sampler(spec: object, *, bounded: bool) -> object:
    """`bounded`: `spec` is PB2's `[low, high]` (its mutations are its bounds)."""
    if bounded and isinstance(spec, list):
        low, high = spec
        return uniform(low, high)
    if isinstance(spec, list):
        return choice(spec)
    if isinstance(spec, MutationFunction) and spec.func is not None:
        return sample_from(spec.func)
    return spec  # a search domain, sampled as it is


def _replayed_space(
    space: dict[str, object], replay: PopulationBasedTrainingReplay
) -> dict[str, object]:
    """The schedule's first config, as Ray's replay sets it."""
    if not replay.changes:
        if not space:
            raise InvalidFieldError(
                "param_space",
                space,
                "a config: the PBT replay's policy file holds no schedule to start from",
            )
        return space
    if space:
        logger.warning(
            "Trial was initialized with a config, which was overwritten. "
            "Did you start the PBT replay with a `config` parameter?"
        )
    return dict(replay.config or {})
