"""tunecore uses only the public API of the packages it depends on (the
stdlib included): no import of a private module (`optuna.samplers._x`,
`ray._private`), no private name imported from one, and no read of a
private attribute (`sampler._rng`, `distribution._contains`).

A private attribute read is found without types: an `obj._name` (or
`getattr(obj, "_name")`) whose `_name` tunecore's code defines nowhere must
belong to someone else; the library's own reads count only the library's
definitions (a name a test defines does not excuse the library). A private
name written as a string counts too: a dependency's private module path
(`"ray._private.worker"`) and a class looked for by name in an object's MRO
(`foreign_base(cls, "ray.tune.tune", ("_Config",))`). A dependency's
private name that tunecore also uses for something of its own (`_rng`)
slips through: the scan is a net, not a proof. What cannot be avoided is in
`ALLOWED`, each with the reason; each the library relies on is checked to
be still where it looks for it, so a release that moves it fails here,
named, in the `latest` session first.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("src/tunecore", "benchmarks", "tests")

# (file, name) -> why it stays. A name alone applies to every file.
ALLOWED: dict[tuple[str, str], str] = {
    ("src/tunecore/api/ray_config.py", "ray.tune.tune._Config"): (
        "Ray's Tuner and tune.run take any instance of this class as a param space (RLlib's "
        "AlgorithmConfig subclasses it), and Ray has no public name for it: neither ray.tune "
        "nor RLlib exports it, and Ray's own check is isinstance(param_space, _Config). "
        "tunecore finds it by module and name in the object's MRO, imports nothing of it, and "
        "test_the_private_names_the_library_relies_on_are_still_there fails if Ray moves it"
    ),
    ("*", "_replace"): "namedtuple's documented API (the underscore avoids field names)",
    ("*", "_exit"): "os._exit, documented: leave a forked or crashing process at once",
    ("benchmarks/storage_sync.py", "ray.train._internal"): (
        "the benchmark times Ray Tune's own checkpoint syncing by wrapping its internal "
        "functions; Ray has no public hook for it, and this is Ray's code under test, not "
        "tunecore's"
    ),
    ("benchmarks/storage_sync.py", "_ExperimentCheckpointManager"): (
        "as ray.train._internal above"
    ),
    ("tests/api/test_resources.py", "_tunecore_resources"): (
        "not a dependency's: the test checks that tunecore no longer sets this attribute of "
        "its own on the user's function"
    ),
    ("tests/api/test_safe_fallback_encoder.py", "ray.air._internal.json"): (
        "the test's oracle is Ray's own SafeFallbackEncoder, which Ray 2.60 defines there; its "
        "public path, ray.tune.utils.util, imports ray.tune, which needs fsspec, not installed "
        "in the test environment. Ray's code checked against, not used by tunecore"
    ),
    ("tests/api/test_ray_small_names.py", "ray._private.dict"): (
        "the property test's oracle is Ray's own unflattened_lookup, which Ray 2.60 defines "
        "there; its public path, ray.tune.utils, imports ray.tune (fsspec, not installed in "
        "the test environment). Ray's code checked against, not used by tunecore"
    ),
    ("tests/api/test_ray_config_space.py", "_Config"): (
        "Ray's Tuner takes any instance of ray.tune.tune._Config as a param space (RLlib's "
        "AlgorithmConfig subclasses it); the test plays the library, subclassing it as RLlib "
        "does. tunecore itself recognises the class by name and imports nothing of it"
    ),
    ("tests/compat/scripts/library_ray_objects.py", "ray.tune.tune._Config"): (
        "as tests/api/test_ray_config_space.py: the script plays RLlib, whose config class "
        "subclasses Ray's _Config"
    ),
}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


LIBRARY = "src/tunecore"
DEPENDENCIES = frozenset(
    {
        "ray", "optuna", "pyarrow", "msgspec", "pydantic", "hypothesis", "fsspec", "numpy",
        "pandas", "sklearn", "hyperopt", "bayes_opt", "ax", "botorch", "nevergrad", "zoopt",
        "hebo", "hpbandster", "ConfigSpace", "wandb", "mlflow", "comet_ml", "aim", "lightning",
        "pytorch_lightning", "torch", "torchvision", "xgboost", "lightgbm", "tensorboardX",
        "keras", "transformers", "cloudpickle", "immutables", "rich", "matplotlib", "moto",
        "playwright",
    }
)  # fmt: skip
"""The packages whose private module paths, written as strings, are found."""
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")
ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "hasattr", "setattr", "delattr"})
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()


@functools.cache
def _files() -> list[tuple[str, ast.Module]]:
    """Every Python file scanned, by its path from the repository's root."""
    return [
        (path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(), str(path)))
        for root in SCANNED
        for path in sorted((ROOT / root).rglob("*.py"))
    ]


@functools.cache
def _defined_names(under: str = "") -> frozenset[str]:
    """Every name tunecore's code (under the folder `under`, all of it when
    empty) binds: functions, classes, attributes it assigns, variables,
    import aliases, module names."""
    names: set[str] = set()
    for where, tree in _files():
        if not where.startswith(under):
            continue
        names.add(Path(where).stem)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias) and node.asname:
                names.add(node.asname)
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)  # a struct's or dataclass's field, given by name
    return frozenset(names)


def _own(module: str | None) -> bool:
    top = (module or "").partition(".")[0]
    return top in ("", "tunecore", "tests", "benchmarks")


def _private_imports(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _own(alias.name) and any(map(_is_private, alias.name.split("."))):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and not _own(node.module):
            module = node.module or ""
            if any(map(_is_private, module.split("."))):
                yield node.lineno, module
            for alias in node.names:
                if _is_private(alias.name):
                    yield node.lineno, f"{module}.{alias.name}"


def _attribute_read(node: ast.expr) -> str | None:
    """The attribute `node` reads or writes: `obj.name`, or a constant name
    given to getattr, hasattr, setattr or delattr."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ATTRIBUTE_FUNCTIONS
        and len(node.args) >= 2  # the object, then the name
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


def _foreign_attributes(tree: ast.Module, defined: frozenset[str]) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr):
            continue
        name = _attribute_read(node)
        if name is not None and _is_private(name) and name not in defined:
            yield node.lineno, name


def _private_names_in_strings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """A dependency's private module or name written as a string: a dotted
    path (`"ray._private.worker"`), or a class `foreign_base` looks for by
    name in an object's MRO (`foreign_base(cls, "ray.tune.tune", ("_Config",))`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            path = node.value
            top = path.partition(".")[0]
            if top in DEPENDENCIES and DOTTED.fullmatch(path) and _has_private_part(path):
                yield node.lineno, path
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "foreign_base"
            and len(node.args) == 3  # the class, the package, the names
            and isinstance(node.args[1], ast.Constant)
            and isinstance(package := node.args[1].value, str)
            and isinstance(node.args[2], ast.Tuple)
        ):
            for name in node.args[2].elts:
                if isinstance(name, ast.Constant) and _is_private(value := str(name.value)):
                    yield node.lineno, f"{package}.{value}"


def _has_private_part(path: str) -> bool:
    return any(map(_is_private, path.split(".")))


def _found(where: str, tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every private name of another package `where`'s code uses."""
    defined = _defined_names(LIBRARY if where.startswith(LIBRARY) else "")
    yield from _private_imports(tree)
    yield from _foreign_attributes(tree, defined)
    if where != SELF:  # the allow-list and the scan's own examples name them
        yield from _private_names_in_strings(tree)


def _allowed(where: str, name: str) -> bool:
    return (where, name) in ALLOWED or ("*", name) in ALLOWED


def _violations() -> list[str]:
    return [
        f"{where}:{line}: {name}"
        for where, tree in _files()
        for line, name in _found(where, tree)
        if not _allowed(where, name)
    ]


def test_no_private_module_attribute_or_name_of_a_dependency_is_used() -> None:
    assert _violations() == []


def test_the_scan_finds_what_it_is_for() -> None:
    """What the library once did (`_optuna_sampler`), written again."""
    code = (
        "import ray._private.worker\n"
        "from optuna.samplers._lazy_random_state import LazyRandomState\n"
        "from optuna.samplers import _lazy_random_state\n"
        "def seed_of(sampler):\n"
        "    return sampler._rng._random_state_never_defined\n"
    )
    tree = ast.parse(code)
    assert [name for _, name in _private_imports(tree)] == [
        "ray._private.worker",
        "optuna.samplers._lazy_random_state",
        "optuna.samplers._lazy_random_state",
    ]
    assert [name for _, name in _foreign_attributes(tree, frozenset({"seed_of"}))] == [
        "_random_state_never_defined",
        "_rng",
    ]


def test_the_scan_finds_private_names_written_as_strings() -> None:
    code = (
        "worker = importlib.import_module('ray._private.worker')\n"
        "seed = getattr(sampler, '_rng')\n"
        "config = foreign_base(type(value), 'ray.tune.tune', ('_Config', 'Tuner'))\n"
        "message = 'ray._private is private'\n"
    )
    tree = ast.parse(code)
    assert sorted(name for _, name in _private_names_in_strings(tree)) == [
        "ray._private.worker",
        "ray.tune.tune._Config",
    ]
    assert [name for _, name in _foreign_attributes(tree, frozenset())] == ["_rng"]


def test_a_test_defining_a_name_does_not_excuse_the_library() -> None:
    """The library's reads count only the library's own definitions."""
    assert _defined_names(LIBRARY) < _defined_names()
    assert "test_a_test_defining_a_name_does_not_excuse_the_library" not in _defined_names(LIBRARY)


def test_every_allowed_use_is_still_there() -> None:
    """An exception no longer needed is taken off the list."""
    used = set()
    for where, tree in _files():
        for _, name in _found(where, tree):
            used.add((where, name))
            used.add(("*", name))
    assert sorted(set(ALLOWED) - used) == []


def test_the_private_names_the_library_relies_on_are_still_there() -> None:
    """Each private name of a dependency the library uses (`ALLOWED`'s for
    src/) is still a class of that name defined in that module: a release
    that renames or moves it fails here by name, not as a param space
    tunecore silently stops recognising."""
    relied_on = sorted(name for where, name in ALLOWED if where.startswith(LIBRARY))
    assert relied_on == ["ray.tune.tune._Config"]
    for dotted in relied_on:
        module, _, name = dotted.rpartition(".")
        found = getattr(importlib.import_module(module), name, None)
        users = [where for where, name in ALLOWED if name == dotted]
        assert isinstance(found, type), f"{dotted}, which {users} relies on, is gone: {found!r}"
        assert found.__module__ == module, (
            f"{dotted}, which {users} relies on, is defined in {found.__module__} now: find its "
            "new home or a public API, and update that module and ALLOWED"
        )
