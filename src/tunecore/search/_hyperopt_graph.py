"""A space of hyperopt's own `hp.*` expressions as JSON, and back.

Ray's `HyperOptSearch` also takes a space written with hyperopt's `hp.*`
functions (a pyll graph). Ray pickles the searcher for `Tuner.restore`;
tunecore pickles nothing, so a searcher whose space is such a graph could
not be rebuilt from the log. Most such spaces are made only of hyperopt's
own functions over plain values (`hp.uniform("a", 0, 1)`, `hp.choice` of
strings or of nested dicts of expressions, `hp.quniform`, ...): those are
data, and this module writes them as a list of nodes, each naming earlier
ones by index (the graph is a DAG: an expression used twice stays one
node, as hyperopt's labels require). A graph holding anything else (a
function of the user's own registered with `scope.define`, an object as a
literal, a non-finite number) is code: `graph_nodes` answers None and the
searcher is passed again to `Tuner.restore`, as before.
"""

from __future__ import annotations

import math
from typing import Any

from tunecore.model import JsonDict, JsonValue

# The pyll functions hyperopt's own `hp.*` builders and the arithmetic of
# its expressions (`hp.uniform("a", 0, 1) * 2 + 1`, `x[0]`) make a graph of.
# A name cannot be defined twice in pyll's scope (`scope.define` refuses
# an existing one), so a node of one of these names is hyperopt's function;
# any other (a function of the user's own) makes the space code. Read from
# this list, not from pyll's registry of functions, which is private.
HYPEROPT_FUNCTIONS = frozenset(
    {
        *("hyperopt_param", "switch", "categorical", "randint", "dict", "pos_args", "int"),
        *("float", "uniform", "quniform", "loguniform", "qloguniform", "normal", "qnormal"),
        *("lognormal", "qlognormal"),
        *("add", "sub", "mul", "truediv", "floordiv", "pow", "neg", "getitem", "len"),
    }
)


def _plain(value: object) -> bool:
    """Whether a literal is a JSON value that reads back as itself."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    return isinstance(value, float) and math.isfinite(value)


def graph_nodes(space: dict[str, Any]) -> list[JsonDict] | None:
    """The space as JSON nodes in dependency order (the last is the root),
    or None when it holds code or values that JSON cannot carry."""
    from hyperopt import pyll  # noqa: PLC0415 - optional package

    root = pyll.as_apply(space)
    order = pyll.dfs(root)
    index = {id(node): i for i, node in enumerate(order)}
    nodes: list[JsonDict] = []
    for node in order:
        if isinstance(node, pyll.Literal):
            if not _plain(node.obj):
                return None
            nodes.append({"literal": node.obj})
            continue
        if node.define_params is not None or node.name not in HYPEROPT_FUNCTIONS:
            return None
        named: list[JsonValue] = [[key, index[id(arg)]] for key, arg in node.named_args]
        nodes.append(
            {
                "apply": node.name,
                "pos": [index[id(arg)] for arg in node.pos_args],
                "named": named,
                "o_len": node.o_len,
                "pure": node.pure,
            }
        )
    return nodes


def graph_space(nodes: list[JsonDict]) -> dict[str, Any]:
    """The space `graph_nodes` wrote, rebuilt as hyperopt expressions."""
    from hyperopt import pyll  # noqa: PLC0415 - optional package

    built: list[Any] = []
    for node in nodes:
        if "literal" in node:
            built.append(pyll.Literal(node["literal"]))
            continue
        name = node["apply"]
        if not isinstance(name, str) or name not in HYPEROPT_FUNCTIONS:
            raise ValueError(f"a hyperopt space in a log names {name!r}, not hyperopt's own")
        pos = node["pos"]
        named = node["named"]
        o_len = node["o_len"]
        assert isinstance(pos, list)
        assert isinstance(named, list)
        assert o_len is None or isinstance(o_len, int)
        built.append(
            pyll.Apply(
                name,
                [built[_index(i)] for i in pos],
                [(str(pair[0]), built[_index(pair[1])]) for pair in _pairs(named)],
                o_len=o_len,
                pure=bool(node["pure"]),
            )
        )
    root = built[-1]
    if root.name != "dict":
        raise ValueError("a hyperopt space in a log is not a dict of expressions")
    return dict(root.named_args)


def _index(value: JsonValue) -> int:
    assert isinstance(value, int)
    return value


def _pairs(values: list[JsonValue]) -> list[list[JsonValue]]:
    pairs = [pair for pair in values if isinstance(pair, list) and len(pair) == 2]
    assert len(pairs) == len(values)
    return pairs


__all__ = ["graph_nodes", "graph_space"]
