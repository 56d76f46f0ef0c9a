"""Packages that import their public names on first use (`tunecore._lazy`):
`tunecore` and `tunecore.core`. In each, the `TYPE_CHECKING` imports (what
type checkers see), `_HOMES` (what runs) and `__all__` must name the same
things; and a worker must not import what only the driver needs."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import tunecore
import tunecore.core

LAZY_PACKAGES = [tunecore, tunecore.core]


def type_checked_names(package: ModuleType) -> dict[str, str]:
    """name -> module, from the package's `if TYPE_CHECKING:` block."""
    assert package.__file__ is not None
    tree = ast.parse(Path(package.__file__).read_text())
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    names: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        assert node.module is not None
        for alias in node.names:
            assert alias.asname == alias.name  # an explicit re-export
            names[alias.name] = (
                f"{package.__name__}.{alias.name}"
                if node.module == package.__name__
                else node.module
            )
    return names


@pytest.mark.parametrize("package", LAZY_PACKAGES, ids=lambda p: p.__name__)
def test_the_type_checked_names_are_the_ones_that_run(package: ModuleType) -> None:
    assert type_checked_names(package) == package._HOMES


@pytest.mark.parametrize("package", LAZY_PACKAGES, ids=lambda p: p.__name__)
def test_all_names_every_public_name(package: ModuleType) -> None:
    version = ["__version__"] if package is tunecore else []
    assert sorted(package.__all__) == sorted([*package._HOMES, *version])


@pytest.mark.parametrize(
    ("package", "name"),
    [(p, name) for p in LAZY_PACKAGES for name in sorted(p._HOMES)],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_each_name_resolves_to_its_home(package: ModuleType, name: str) -> None:
    value = getattr(package, name)
    home = importlib.import_module(package._HOMES[name])
    own = f"{package.__name__}.{name}"
    assert value is (home if home.__name__ == own else getattr(home, name))


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="'tunecore' has no attribute 'Tunr'"):
        _ = tunecore.Tunr  # type: ignore[attr-defined]


def test_star_import_gives_every_name() -> None:
    namespace: dict[str, object] = {}
    exec("from tunecore import *", namespace)
    assert set(tunecore.__all__) <= namespace.keys()


DRIVER_ONLY = (
    "tunecore.api",
    "pydantic",
    "tunecore.core.lifecycle",
    "tunecore.core.experiment",
    "tunecore.shell.storage.layout",
    "tunecore.shell.eventlog",
    "tunecore.shell.loop",
    "tunecore.shell.executors.base",
    "tunecore.shell.executors.queued",
    "tunecore.shell.executors.inprocess",
    "tunecore.shell.executors.ray",
)
"""What a Ray worker hosting a trial has no use for: the API, the core's
lifecycle and experiment, the driver's storage, log and loop, the executors.
Each new worker would import them before its first trial."""


def test_a_worker_imports_nothing_only_the_driver_needs() -> None:
    """What a Ray actor imports to host a trial: `TrialHost`, and the
    registry its trainable factory comes from."""
    code = (
        "import sys, tunecore.shell.executors.host, tunecore.shell.trainable.registry\n"
        f"print(sorted(m for m in sys.modules if m.startswith({DRIVER_ONLY!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# The submodules Ray 2.60's `ray.tune` holds as attributes once imported
# (`dir(ray.tune)`, less Ray's internals and the packages it imports).
RAY_TUNE_SUBMODULES = [
    "analysis", "callback", "context", "error", "experiment", "experimental", "logger",
    "progress_reporter", "registry", "result", "result_grid", "schedulers", "search",
    "stopper", "syncer", "trainable", "tune", "tune_config", "tuner", "utils",
]  # fmt: skip


@pytest.mark.parametrize("name", RAY_TUNE_SUBMODULES)
def test_rays_submodules_are_attributes_of_the_package(name: str) -> None:
    assert isinstance(getattr(tunecore, name), ModuleType)


def test_a_dotted_annotation_through_submodules_resolves() -> None:
    # A user's `-> tune.analysis.experiment_analysis.ExperimentAnalysis`.
    assert tunecore.analysis.experiment_analysis.ExperimentAnalysis is tunecore.ExperimentAnalysis
