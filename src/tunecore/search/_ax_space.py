"""tunecore's search domains as Ax parameters, and Ax's values as configs.

Each searched parameter becomes one parameter of the Ax experiment, named
by its '/'-joined path (as Ray names it), converted as Ray's
`AxSearch.convert_search_space` converts it:

| tunecore | Ax |
|---|---|
| uniform, quniform | range, float, bounds [low, high] |
| loguniform, qloguniform | range, float, log scale |
| randint(lo, hi), qrandint | range, int, over the integers (multiples of q) in range |
| lograndint, qlograndint | range, int, log scale, over the integers in range |
| choice | choice over the categories' indices (unordered) |

Ax has no normal parameter: randn and qrandn are refused naming their
path, as Ray refuses them. As for HEBO, Nevergrad and ZOOpt, a quantized
value is rounded onto its lattice (Ray drops q with a warning), and a
domain with a single value is a constant, not searched. Each entry is
JSON (`RangeParameterConfig` / `ChoiceParameterConfig`'s arguments plus a
"kind"), made into Ax's configs only when the experiment is set up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tunecore.core.search.variants import ParamSpace
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.search._dimension import Dimension as OneParameter
from tunecore.search._dimension import Entries, dimension, log_base

Dimension = OneParameter[dict[str, Any]]
"""One parameter: its entry is the arguments of its Ax parameter config."""


def dimensions(space: ParamSpace) -> list[Dimension]:
    """The Ax parameter of every searched parameter (the table)."""
    return [dimension(parameter, _ENTRIES) for parameter in space.sampled]


def parameter_configs(entries: list[dict[str, Any]]) -> list[Any]:
    """Ax's `RangeParameterConfig` / `ChoiceParameterConfig` of each entry."""
    from ax.api.configs import ChoiceParameterConfig, RangeParameterConfig  # noqa: PLC0415

    made: list[Any] = []
    for entry in entries:
        arguments = {key: value for key, value in entry.items() if key != "kind"}
        if entry["kind"] == "range":
            arguments["bounds"] = tuple(arguments["bounds"])
            made.append(RangeParameterConfig(**arguments))
        else:
            made.append(ChoiceParameterConfig(**arguments))
    return made


def _range(name: str, bounds: list[Any], kind: str, *, log: bool) -> dict[str, Any]:
    return {
        "kind": "range",
        "name": name,
        "bounds": bounds,
        "parameter_type": kind,
        "scaling": "log" if log else "linear",
    }


_ENTRIES = Entries[dict[str, Any]](
    choice=lambda name, indices: {
        "kind": "choice",
        "name": name,
        "values": indices,
        "parameter_type": "str",
        "is_ordered": False,
    },
    real=lambda name, low, high, domain: _range(
        name, [low, high], "float", log=log_base(domain) is not None
    ),
    # Ax's integer counts multiples of q; on the log scale q rounds in the config
    integer=lambda name, first, last, domain: _range(
        name, [first, last], "int", log=log_base(domain) is not None
    ),
    refusal="a domain AxSearch can model (tune.uniform, loguniform, randint, lograndint, "
    "choice and their quantized forms: Ax has no normal parameter, as in Ray Tune)",
    index=str,
)


def native_entries(space: list[Any]) -> tuple[list[dict[str, Any]], dict[str, JsonValue]]:
    """Ray's Ax space (a list of `{"name", "type": "range" | "choice" |
    "fixed", ...}` dicts) as entries for `parameter_configs`, and the fixed
    parameters' values; a malformed one is an error naming its index."""
    entries: list[dict[str, Any]] = []
    fixed: dict[str, JsonValue] = {}
    for index, item in enumerate(space):
        where = f"AxSearch.space[{index}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise InvalidFieldError(where, item, "a dict with a 'name' and a 'type'")
        name, kind = item["name"], item.get("type")
        if kind == "fixed":
            fixed[name] = item.get("value")
        elif kind == "range":
            bounds = item.get("bounds")
            if not isinstance(bounds, list | tuple) or len(bounds) != 2:
                raise InvalidFieldError(f"{where}['bounds']", bounds, "[low, high]")
            value_type = item.get("value_type") or (
                "int" if all(isinstance(b, int) for b in bounds) else "float"
            )
            entries.append(
                _range(name, list(bounds), value_type, log=bool(item.get("log_scale", False)))
            )
        elif kind == "choice":
            values = item.get("values")
            if not isinstance(values, list | tuple) or not values:
                raise InvalidFieldError(f"{where}['values']", values, "a list of values")
            entries.append(
                {
                    "kind": "choice",
                    "name": name,
                    "values": list(values),
                    "parameter_type": _value_type(values[0]),
                    "is_ordered": item.get("is_ordered"),
                }
            )
        else:
            raise InvalidFieldError(f"{where}['type']", kind, "'range', 'choice' or 'fixed'")
    return entries, fixed


def _value_type(value: object) -> str:
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float")):
        if isinstance(value, kind):
            return name
    return "str"


__all__ = [
    "Dimension",
    "dimensions",
    "native_entries",
    "parameter_configs",
]
