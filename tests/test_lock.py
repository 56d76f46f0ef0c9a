"""The lock covers what the project asks for, so every environment the
sessions make is pinned (a dependency added to pyproject.toml without
`./dev lock` would otherwise install whatever is newest that day)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).parent.parent


def locked_versions() -> dict[str, str]:
    """Each package the lock pins, by canonical name."""
    text = (ROOT / "requirements" / "dev.lock").read_text(encoding="utf-8")
    pins = re.findall(r"^([A-Za-z0-9._-]+)==([^\s;]+)", text, re.MULTILINE)
    return {canonicalize_name(name): version for name, version in pins}


def asked_for() -> list[Requirement]:
    """Every requirement pyproject.toml names, its own extras left out."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    lines = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        lines.extend(extra)
    requirements = [Requirement(line) for line in lines]
    return [r for r in requirements if canonicalize_name(r.name) != "tunecore"]


def test_every_requirement_is_pinned_by_the_lock_at_a_version_it_allows() -> None:
    locked = locked_versions()
    for requirement in asked_for():
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement} is not in requirements/dev.lock: run ./dev lock"
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"requirements/dev.lock pins {name}=={locked[name]}, outside {requirement}: "
            "run ./dev lock"
        )


def test_the_bootstrap_tools_are_pinned() -> None:
    lines = (ROOT / "requirements" / "tools.txt").read_text(encoding="utf-8").splitlines()
    tools = [line for line in lines if line.strip() and not line.startswith("#")]
    assert {Requirement(line).name for line in tools} == {"nox", "uv"}
    assert all("==" in line for line in tools), tools
    # nox's own dependencies come from the lock (./dev installs the tools with
    # `-c requirements/dev.lock`), so nox's pin must be the lock's.
    (nox,) = (Requirement(line) for line in tools if Requirement(line).name == "nox")
    assert str(nox.specifier) == f"=={locked_versions()['nox']}"
