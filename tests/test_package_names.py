"""`tunecore/__init__.py` imports its public names on first use: its
`TYPE_CHECKING` imports (what type checkers see), `_HOMES` (what runs) and
`__all__` must name the same things, and a worker must not import the API."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import tunecore

INIT = Path(tunecore.__file__)


def type_checked_names() -> dict[str, str]:
    """name -> module, from the `if TYPE_CHECKING:` block."""
    tree = ast.parse(INIT.read_text())
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
                f"tunecore.{alias.name}" if node.module == "tunecore" else node.module
            )
    return names


def test_the_type_checked_names_are_the_ones_that_run() -> None:
    assert type_checked_names() == tunecore._HOMES


def test_all_names_every_public_name() -> None:
    assert sorted(tunecore.__all__) == sorted([*tunecore._HOMES, "__version__"])


@pytest.mark.parametrize("name", sorted(tunecore._HOMES))
def test_each_name_resolves_to_its_home(name: str) -> None:
    value = getattr(tunecore, name)
    home = sys.modules[tunecore._HOMES[name]]
    assert value is (home if home.__name__ == f"tunecore.{name}" else getattr(home, name))


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="'tunecore' has no attribute 'Tunr'"):
        _ = tunecore.Tunr  # type: ignore[attr-defined]


def test_star_import_gives_every_name() -> None:
    namespace: dict[str, object] = {}
    exec("from tunecore import *", namespace)
    assert set(tunecore.__all__) <= namespace.keys()


def test_a_worker_imports_neither_the_api_nor_pydantic() -> None:
    """What a Ray actor imports to host a trial (`TrialHost`)."""
    code = (
        "import sys, tunecore.shell.executors.host\n"
        "print(sorted(m for m in sys.modules if m.startswith(('tunecore.api', 'pydantic'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
