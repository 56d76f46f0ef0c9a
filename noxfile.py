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
    # Ray Tune only here, pinned to the Ray tunecore runs on, so both
    # frameworks share one Ray in the side-by-side comparison.
    # (run_install: the version is needed under --install-only too.)
    ray_version = session.run_install(
        "python", "-c", "import ray; print(ray.__version__)", silent=True
    )
    assert isinstance(ray_version, str)
    session.install(f"ray[tune]=={ray_version.strip()}")
    # tensorboardX's checksums in C, as tunecore's are with google-crc32c:
    # Ray Tune at its best writes its TensorBoard files at the same cost.
    session.install("crc32c")
    session.run("python", "-m", "benchmarks", *session.posargs)


@nox.session(python=PYTHON)
def examples(session: nox.Session) -> None:
    """Every example end to end (on a local Ray, scikit-learn for
    asha_sklearn, Hypothesis for custom_scheduler)."""
    session.install("-e", ".[examples,testing]")
    for example in ("quickstart.py", "asha_sklearn.py", "pbt.py", "custom_scheduler.py"):
        session.run("python", f"examples/{example}", *session.posargs)


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The main job: a real tuning run on a local Ray (examples/quickstart.py)."""
    session.install("-e", ".")
    session.run("python", "examples/quickstart.py", *session.posargs)
