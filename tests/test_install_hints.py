"""The install hints in errors and docs name extras that exist (`nox -s
package` installs each as written into a fresh environment)."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from scripts.install_hints import ROOT, install_hints


def test_every_install_hint_names_an_extra_that_exists() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = set(project["optional-dependencies"])
    hints = install_hints()
    assert "tunecore[optuna]" in hints  # the scan finds the hints there are
    for hint in hints:
        missing = Requirement(hint).extras - declared
        assert not missing, f"{hint} names extras pyproject.toml does not declare: {missing}"
