"""Developer sessions. `./dev` bootstraps nox itself; see README.md."""

from __future__ import annotations

import nox

nox.options.sessions = ["typecheck", "lint", "tests"]
PYTHON = "3.11"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The whole pytest suite: unit, property, stateful and integration tests."""
    session.install("-e", ".[dev]")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the library, its tests, benchmarks and examples."""
    session.install("-e", ".[dev]")
    session.run("mypy")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff (lint and format) and the import-linter layer contract."""
    session.install("--no-deps", "-e", ".")
    session.install("ruff>=0.5", "import-linter>=2.0")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("lint-imports")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks; ratios are measured side by side in one run."""
    session.install("-e", ".[bench]")
    session.run("python", "-m", "benchmarks", *session.posargs)


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The main job: a real tuning run on a local Ray (examples/quickstart.py)."""
    session.install("-e", ".")
    session.run("python", "examples/quickstart.py", *session.posargs)
