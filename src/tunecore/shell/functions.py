"""The user's functions the core cannot hold, and the values it asks of them.

A `sample_from` in the param space and a function in PBT's
`hyperparam_mutations` are Python code; the searcher and the scheduler in
the core are data (they are logged and replayed). They keep the functions'
places and say what they wait for (`ValuesWanted`), which the core sends
as a `DrawValues` command; the loop has `UserFunctions.draw` call the
functions here and hand back a `ValuesDrawn` event. The loop logs it like
any event, so replay and
resume rebuild the same configs without the functions; only going on
(`Tuner.restore`) needs them again, to draw the values not drawn yet: the
param space's from its `param_space=` (an error naming the path says so
when missing). PBT's are not given back to a restore: it then perturbs the
values those functions drew instead of resampling them, and takes the
configs it explored as they are where `custom_explore_fn` would have
changed them (with a warning).

Results of the functions are made plain JSON the way users write them:
numpy scalars and arrays (anything with `tolist()`) become Python numbers
and lists.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping

from tunecore.core.schedulers.pbt import CUSTOM_EXPLORE_PATH
from tunecore.core.search.base import unwrapped
from tunecore.core.search.domains import SampleFrom, plain_json
from tunecore.core.search.generator import BasicVariantGenerator
from tunecore.core.search.variants import (
    Parameter,
    call_functions,
    parse_space,
    with_functions,
)
from tunecore.core.search.view import Path
from tunecore.model import DrawValues, JsonDict, JsonValue, ValuesDrawn

logger = logging.getLogger(__name__)

MutationFunctions = Mapping[Path, Callable[[], object]]
ExploreFunction = Callable[[JsonDict], object]


class UserFunctions:
    """The functions by path: the param space's `sample_from`s and the
    scheduler's mutation functions."""

    def __init__(
        self,
        space: Mapping[Path, SampleFrom] | None = None,
        mutations: MutationFunctions | None = None,
        explore: ExploreFunction | None = None,
    ) -> None:
        self._space = dict(space or {})
        self._mutations = dict(mutations or {})
        self._explore = explore
        self._warned = False

    @classmethod
    def of(
        cls,
        param_space: Mapping[str, object] | None,
        searcher: object = None,
        scheduler: object = None,
    ) -> UserFunctions:
        """The functions in a param space (or in a `BasicVariantGenerator`
        the user built with one, possibly wrapped) and in a scheduler's
        `hyperparam_mutations`."""
        space: dict[Path, SampleFrom] = {}
        inner = unwrapped(searcher)
        if isinstance(inner, BasicVariantGenerator):
            space.update(inner.functions)
        if param_space:
            for parameter in parse_space(param_space).derived:
                assert isinstance(parameter.domain, SampleFrom)
                space[parameter.path] = parameter.domain
        mutations = getattr(scheduler, "functions", None)
        explore = getattr(scheduler, "explore_function", None)
        return cls(
            space,
            mutations if isinstance(mutations, Mapping) else None,
            explore if callable(explore) else None,
        )

    def draw(self, command: DrawValues, at: float) -> ValuesDrawn | None:
        """The values `command` asks for, as the event that reports them;
        None when the functions are not here (see `_mutation_values`)."""
        if command.owner == "searcher":
            values: list[JsonValue] | None = self._space_values(command)
        else:
            values = self._mutation_values(command)
        if values is None:
            return None
        return ValuesDrawn(at=at, owner=command.owner, key=command.key, values=values)

    def _space_values(self, wanted: DrawValues) -> list[JsonValue]:
        parameters = with_functions(self._space, wanted.paths)
        plain = [_plain(parameter) for parameter in parameters]
        return call_functions(wanted.config, plain)

    def _mutation_values(self, wanted: DrawValues) -> list[JsonValue] | None:
        """The mutation functions' values; None when they are not here (a
        restored experiment: `Tuner.restore` is not given the scheduler),
        and PBT then perturbs those values instead of resampling them.
        `custom_explore_fn` answers with the config it returns (the one PBT
        explored, after a restore)."""
        if wanted.paths == (CUSTOM_EXPLORE_PATH,):
            return [self._explored(wanted.config)]
        if any(path not in self._mutations for path in wanted.paths):
            if not self._warned:
                self._warned = True
                logger.warning(
                    "PBT's mutation functions are not available after a restore: "
                    "the values they draw are perturbed instead of resampled"
                )
            return None
        values: list[JsonValue] = []
        for path in wanted.paths:
            shown = "".join(f"[{part!r}]" for part in path)
            where = f"PopulationBasedTraining.hyperparam_mutations{shown}"
            values.append(plain_json(where, _to_plain(self._mutations[path]())))
        return values

    def _explored(self, config: JsonDict) -> JsonValue:
        """`custom_explore_fn(config)`, as plain JSON; `config` itself when
        the function is not here (a restore), with a warning."""
        where = "PopulationBasedTraining.custom_explore_fn"
        if self._explore is None:
            logger.warning(
                "%s is not available after a restore: the configs PBT explores are "
                "used as they are",
                where,
            )
            return config
        answer = _to_plain(self._explore(copy.deepcopy(config)))
        if not isinstance(answer, dict):
            raise TypeError(f"{where} returned {answer!r}; it must return the config dict")
        return plain_json(where, answer)


def _plain(parameter: Parameter) -> Parameter:
    """The parameter with its function's results made plain JSON."""
    domain = parameter.domain
    assert isinstance(domain, SampleFrom)
    func = domain.func
    assert callable(func)

    def with_config(config: object) -> object:
        return _to_plain(func(config))

    def alone() -> object:
        return _to_plain(func())

    return Parameter(parameter.path, SampleFrom(with_config if domain.takes_config else alone))


def _to_plain(value: object) -> object:
    """numpy scalars and arrays (anything with `tolist()`) as Python values."""
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, list | tuple | dict | str):
        return tolist()
    if isinstance(value, list | tuple):
        return [_to_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _to_plain(item) for key, item in value.items()}
    return value
