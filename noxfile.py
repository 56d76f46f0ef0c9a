"""Developer sessions. `./dev` bootstraps nox and uv itself; see README.md.

Every environment is made from `requirements/dev.lock`, the versions the
suite last passed with, so a green run today is green next month: each
install, and each build it makes of a source package, is held to a lock
(`locked`), and each session then checks that its environment holds
nothing else (`check_locked`); tests/test_installs_are_locked.py holds
every install here to that. The `latest` session is the one that tries
today's newest releases instead, run on purpose to see upstream drift as a
named failure. `./dev lock` refreshes the locks from pyproject.toml.

typecheck, lint and tests share one environment (`.venv`): it is made
once and then only kept in step with the lock, which costs nothing when it
already is.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import tempfile
import tomllib
from collections.abc import Callable, Collection
from pathlib import Path

import nox
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

nox.options.sessions = ["lint", "typecheck", "tests", "package", "optuna"]
nox.options.default_venv_backend = "uv"
PYTHON = "3.11"
ROOT = Path(__file__).parent
LOCK = "requirements/dev.lock"
USER_LOCK = "requirements/user.lock"
"""What `package`'s user gets from `pip install 'tunecore[...]'`: every
extra but `dev`, `bench` and `APART_HINTS`', resolved as pip resolves them
(without the overrides of requirements/lock-overrides.txt, which pip does
not have), pinned by `./dev lock` as dev.lock is."""
INSTALLERS = "requirements/lock-installers.in"
SHARED_ENV = ROOT / ".venv"
CPU_TORCH = "torch==2.13.0"
"""The torch the framework extras run on (held in the lock by
requirements/lock-constraints.txt): pip takes its CPU build from the wheels
the machine's pip configuration finds (`find-links`), where uv would take
the multi-GB CUDA build from PyPI, so the sessions that need it use pip."""
LOCK_INPUTS = (
    "pyproject.toml",
    INSTALLERS,
    "--all-extras",
    "--constraint=requirements/lock-constraints.txt",
    "--override=requirements/lock-overrides.txt",
    "--universal",
    f"--python-version={PYTHON}",
)
SEEDED_AS_LOCKED = ["--no-periodic-update"]
"""virtualenv's option for the environments it makes (`frameworks`,
`searchers_torch`): seeded with the pip and setuptools its locked release
embeds (the lock's), not with newer ones it would otherwise fetch in the
background and use weeks later."""


def locked(constraints: str = LOCK) -> tuple[str, ...]:
    """The arguments that hold a `pip install` or `uv pip install` to
    `constraints`: what it installs (`-c`) and what it builds a source
    package with (`--build-constraint`: `-c` alone leaves the setuptools
    that builds tunecore, hpbandster or netifaces to the day's newest).
    The path is made absolute: `package` installs the hints from a
    directory of its own."""
    path = str(ROOT / constraints)
    return ("-c", path, "--build-constraint", path)


def pip_locked(constraints: str) -> dict[str, str]:
    """`locked` for a pip command run as a user writes it: the same
    constraints, given in the environment pip reads its options from."""
    path = str(ROOT / constraints)
    return {"PIP_CONSTRAINT": path, "PIP_BUILD_CONSTRAINT": path}


def unlocked(frozen: str, lock_text: str, exempt: Collection[str] = ()) -> list[str]:
    """The lines of `frozen` (`pip freeze`'s output) that `lock_text` does
    not pin: a package it lacks or at another version, or one installed
    from elsewhere than an index (tunecore itself, from its wheel or this
    clone, and the packages named in `exempt`, aside). `2.13.0+cpu` is the
    lock's `2.13.0`, as for pip."""
    pins: dict[str, set[str]] = {}
    for name, version in re.findall(r"^([A-Za-z0-9._-]+)==([^\s;]+)", lock_text, re.MULTILINE):
        pins.setdefault(canonicalize_name(name), set()).add(version)
    aside = {"tunecore", *map(canonicalize_name, exempt)}
    found = []
    for line in map(str.strip, frozen.splitlines()):
        name = canonicalize_name(re.split(r"[=@ \[]", line, maxsplit=1)[0])
        if not line or line == f"-e {ROOT.as_uri()}" or name in aside:
            continue
        version = line.partition("==")[2].strip()
        if not any(SpecifierSet(f"=={pin}").contains(version) for pin in pins.get(name, ())):
            found.append(line)
    return found


def check_locked(
    session: nox.Session, python: str, constraints: str = LOCK, exempt: Collection[str] = ()
) -> None:
    """Fails the session unless every package in `python`'s environment is
    at the version `constraints` pins: an install that escaped the lock
    (a dependency the lock lacks, a newer seeded pip) is named here, rather
    than passing on that day's release until the day it breaks."""
    frozen = session.run(
        "uv", "pip", "freeze", "--quiet", "--python", python, silent=True, external=True
    )  # fmt: skip
    assert isinstance(frozen, str)
    strays = unlocked(frozen, (ROOT / constraints).read_text(encoding="utf-8"), exempt)
    if strays:
        session.error(f"installed but not as {constraints} pins them: {', '.join(strays)}")


DROP_ENVS = "DEV_DROP_ENVS"
"""Set (to 1, by .ci/run), the sessions with an environment of their own
delete it when they end, pass or fail: `frameworks`, `searchers_torch` and
`examples_torch` hold some 4 GB each, and CI's disk ran out with all of
them beside the shared one. A developer keeps them, for the next run."""


def drops_its_env(run: Callable[..., None]) -> Callable[..., None]:
    """Wraps a session made in its own environment so that, under
    `DROP_ENVS`, the environment is deleted when the session ends."""

    @functools.wraps(run)
    def session_then_drop(session: nox.Session, **parameters: str) -> None:
        try:
            run(session, **parameters)
        finally:
            if os.environ.get(DROP_ENVS) == "1":
                shutil.rmtree(session.virtualenv.location, ignore_errors=True)

    return session_then_drop


def shared_env(session: nox.Session) -> Callable[..., None]:
    """Makes the environment typecheck, lint and tests share, or brings it in
    step with the lock; returns a function that runs one of its tools."""
    python = SHARED_ENV / "bin" / "python"
    if not python.exists():
        session.run("uv", "venv", "--python", PYTHON, str(SHARED_ENV), external=True)
    session.run(
        "uv", "pip", "install", "--quiet", "--python", str(python), *locked(), "-e", ".[dev]",
        external=True,
    )  # fmt: skip
    check_locked(session, str(python))
    path = f"{SHARED_ENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {"PATH": path, "VIRTUAL_ENV": str(SHARED_ENV)}

    def run(tool: str, *args: str) -> None:
        session.run(str(SHARED_ENV / "bin" / tool), *args, env=env, external=True)

    return run


@nox.session(venv_backend="none")
def tests(session: nox.Session) -> None:
    """The pytest suite but its slow tests: unit, property, stateful and
    integration tests, each named as it runs (arguments go to pytest, and
    then select from every test: `./dev test tests/core`)."""
    run = shared_env(session)
    run("pytest", *(session.posargs or ["-v", "--durations=10", "-m", "not slow"]))


@nox.session(venv_backend="none")
def slow(session: nox.Session) -> None:
    """The tests marked slow: user scripts written as Ray's docs write them,
    the README's and docs' snippets, kills and chaos, a two-node cluster,
    S3, the framework integrations (`./dev test --all` and CI run them)."""
    run = shared_env(session)
    run("pytest", "-v", "--durations=10", "-m", "slow", *session.posargs)


@nox.session(venv_backend="none")
def memory(session: nox.Session) -> None:
    """Issue 41's driver-memory targets as a regression check
    (`benchmarks.scale_regression --memory-only`: simulated FIFO and ASHA
    runs of 1,000 and 10,000 trials, and the scale suite's ASHA experiment
    in-process, each judged per finished trial; some 2 minutes of CPU).
    `./dev test --all` runs it, so CI does: a change that made the trials'
    views 1.5 KB a trial dearer once landed unnoticed, with the check only
    in `./dev bench`. The targets that need Ray and 100,000-trial builds
    stay in `./dev bench scale_regression`."""
    run = shared_env(session)
    run("python", "-m", "benchmarks", "scale_regression", "--memory-only")


@nox.session(venv_backend="none")
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the library, its tests, benchmarks and examples;
    then pyright over the public API's typing tests, so its types hold
    under both checkers users run."""
    run = shared_env(session)
    run("mypy")
    run("pyright", *PUBLIC_TYPING_TESTS)
    run("python", *STUBTEST)


PUBLIC_TYPING_TESTS = ("tests/typing", "tests/test_public_types.py")
"""The files whose `assert_type`s pin the public API's types."""
STUBTEST = (
    "-m", "mypy.stubtest", "--mypy-config-file", "mypy.ini", "--ignore-missing-stub",
    "--allowlist", "typings/stubtest-allowlist.txt",
    "bayes_opt", "cloudpickle", "hpbandster", "hyperopt", "pyarrow", "sklearn", "yaml", "zoopt",
)  # fmt: skip
"""typings/' stubs against the installed releases (the lock's, or the
newest in `latest`): a stub that says what a release no longer does lets
mypy pass a call that fails. nevergrad's stub is left out: nevergrad 1.0.3
imports only beside bayesian-optimization 3 through tunecore.search.nevergrad's
shim, which stubtest's plain import does not take."""


@nox.session(venv_backend="none")
def lint(session: nox.Session) -> None:
    """ruff (lint and format) and the import-linter layer contracts."""
    run = shared_env(session)
    run("ruff", "check", ".")
    run("ruff", "format", "--check", ".")
    run("lint-imports")


@nox.session(python=PYTHON, reuse_venv=False)
@drops_its_env
def package(session: nox.Session) -> None:
    """tunecore as a user installs it: a wheel built with `python -m build`,
    installed (not editable) into a fresh environment, runs the README's
    first example and `get_dataframe()` from a directory outside the clone,
    and every install hint in errors and docs (`pip install 'tunecore[plot]'`)
    works as written from that install."""
    session.install(*locked(), "build", "setuptools", "wheel")
    check_locked(session, _python(session))
    dist = Path(tempfile.mkdtemp(prefix="tunecore-dist-"))
    try:
        _install_as_a_user(session, dist)
    finally:
        shutil.rmtree(dist, ignore_errors=True)  # the wheel and three environments


def _install_as_a_user(session: nox.Session, dist: Path) -> None:
    """`package`'s steps, in `dist`."""
    # Built with the lock's setuptools, not in an isolated environment of the day's.
    session.run(
        "python", "-m", "build", "--no-isolation", "--wheel", "--outdir", str(dist), silent=True
    )  # fmt: skip
    (wheel,) = dist.glob("tunecore-*.whl")
    user_python = _user_env(session, dist / "user-env", USER_LOCK)
    session.run(
        "uv", "pip", "install", "--python", user_python, *locked(USER_LOCK), str(wheel),
        external=True,
    )  # fmt: skip
    check_locked(session, user_python, USER_LOCK)
    elsewhere = dist / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(ROOT / "scripts" / "first_run.py", elsewhere)
    with session.chdir(elsewhere):
        session.run(
            user_python, "first_run.py", str(ROOT / "README.md"),
            env={"HOME": str(elsewhere)}, external=True,
        )  # fmt: skip
        hints = session.run("python", str(ROOT / "scripts" / "install_hints.py"), silent=True)
        assert isinstance(hints, str)
        together = [hint for hint in hints.split() if hint not in APART_HINTS]
        _install_hints(session, user_python, together, USER_LOCK)
    for index, (hint, lock) in enumerate(APART_HINTS.items()):  # each in an environment of its own
        apart_python = _user_env(session, dist / f"apart-env-{index}", lock)
        _install_hints(session, apart_python, [f"{hint} @ {wheel.as_uri()}"], lock)


APART_HINTS = {"tunecore[hebo]": "requirements/user-hebo.lock"}
"""Hints pip cannot install beside the others, each with the lock of its
own environment: HEBO declares numpy < 1.25, bayesian-optimization 3
(tunecore[bayesopt]) numpy >= 1.25."""


def _python(session: nox.Session) -> str:
    """The interpreter of the session's own environment."""
    return str(Path(session.virtualenv.location) / "bin" / "python")


def _user_env(session: nox.Session, where: Path, lock: str) -> str:
    """A fresh environment at `where` with the pip of `lock` (not `uv venv
    --seed`'s, the day's newest), as a user's; returns its python."""
    session.run("uv", "venv", "--python", PYTHON, str(where), external=True)
    python = str(where / "bin" / "python")
    session.run("uv", "pip", "install", "--python", python, *locked(lock), "pip", external=True)
    check_locked(session, python, lock)
    return python


def _install_hints(session: nox.Session, python: str, hints: list[str], lock: str) -> None:
    """`pip install` the hints as written, held to `lock` through pip's
    environment (`pip_locked`), then `pip check`."""
    pip = (python, "-m", "pip")
    # `tunecore[lightning]` (and hebo, ax) pull torch: its CPU build first, as in `frameworks`.
    session.run(*pip, "install", "--quiet", *locked(lock), CPU_TORCH, external=True)
    session.run(*pip, "install", "--quiet", *hints, env=pip_locked(lock), external=True)
    session.run(*pip, "check", external=True)
    check_locked(session, python, lock)


def _lock_without(session: nox.Session, package: str) -> str:
    """The lock less one package's pin, as a constraints file in the
    session's environment. Not in `session.create_tmp()`: that points
    TMPDIR inside the virtualenv, where Ray's workers refuse to start
    ("temp_dir must not be child directory of virtualenv root") and
    `ray.init` then waits for them forever."""
    path = Path(session.virtualenv.location) / f"lock-without-{package}.txt"
    locked = Path(LOCK).read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(
        "".join(line for line in locked if not line.startswith(f"{package}==")), encoding="utf-8"
    )
    return str(path)


@nox.session(python=PYTHON)
@nox.parametrize("optuna", ["5.0.0"])
@drops_its_env
def optuna(session: nox.Session, optuna: str) -> None:
    """OptunaSearch on the other Optuna releases it supports (`tests` runs
    the lock's own): exact resume by re-asking for every sampler Optuna
    ships, and no private Optuna API used."""
    others = _lock_without(session, "optuna")
    session.install(*locked(others), "-e", ".[dev]", f"optuna=={optuna}")
    check_locked(session, _python(session), others, exempt={"optuna"})
    tests = ("tests/search/test_optuna.py", "tests/test_public_apis.py")
    session.run("pytest", "-q", *tests, *session.posargs)


FRAMEWORK_TESTS = (
    "tests/integrations/test_keras.py",
    "tests/integrations/test_pytorch_lightning.py",
    "tests/integrations/test_framework_extras.py",
    "tests/integrations/test_ray_train.py",
    "tests/integrations/test_ray_train_passthrough.py",
    "tests/api/test_scaling_config_vs_ray_train.py",
    "tests/compat/test_compat.py",
)


@nox.session(python=PYTHON, venv_backend="virtualenv", venv_params=SEEDED_AS_LOCKED)
@drops_its_env
def frameworks(session: nox.Session) -> None:
    """The Keras and Lightning callbacks (tunecore.integration.keras,
    .pytorch_lightning, tunecore.integrations.keras), Ray Train's
    TorchTrainer reporting through tunecore.integration.ray_train and
    passed through as tunecore.torch (configs converted, worker calls
    delegated), and
    their compat scripts, on torch's CPU build with Keras on its torch
    backend (torch brings fsspec, which `ray.train` imports).

    pip, not uv, makes this environment: it installs torch's CPU build
    first (`CPU_TORCH`), then tunecore with the lock, which pins Keras and
    Lightning too."""
    session.install(*locked(), CPU_TORCH)
    session.install(*locked(), "-e", ".[dev,keras,lightning]")
    check_locked(session, _python(session))
    session.run(
        "pytest", "-v", *FRAMEWORK_TESTS, "-k", "keras or lightning or extras or ray_train",
        *session.posargs, env={"KERAS_BACKEND": "torch"},
    )  # fmt: skip


TORCH_SEARCHER_TESTS = (
    "tests/search/test_hebo.py",
    "tests/search/test_ax.py",
    "tests/compat/test_compat.py",
)
HEBO_WITHOUT_ITS_PINS = (
    "HEBO>=0.3.5",
    "pymoo>=0.6,<0.6.1",
    "autograd",
    "alive-progress",
    "about-time",
    "graphemeu",
    "Deprecated",
    "dill",
    "disjoint-set",
    "networkx",
)
"""HEBO and what it imports, installed without their declared pins: HEBO
declares numpy < 1.25 and pymoo 0.6.0 declares cma 3.2.2, both of which
the lock overrides (requirements/lock-overrides.txt says why); pip has no
overrides, so it would refuse the lock's numpy and cma instead."""


@nox.session(python=PYTHON, venv_backend="virtualenv", venv_params=SEEDED_AS_LOCKED)
@drops_its_env
def searchers_torch(session: nox.Session) -> None:
    """HEBOSearch and AxSearch (tunecore.search.hebo, .ax) and their compat
    scripts, on torch's CPU build (the `tests` session has no torch: their
    tests skip there). pip makes this environment, as in `frameworks`:
    torch's CPU build first, then tunecore with Ax and the lock, then HEBO
    without the pins the lock overrides."""
    session.install(*locked(), CPU_TORCH)
    # botorch (Ax's) asks for pymoo, and the lock's pymoo 0.6.0 pins cma 3.2.2,
    # which the lock overrides (requirements/lock-overrides.txt) and pip
    # cannot: Ax gets whatever pymoo fits, then HEBO's pymoo goes in unchecked.
    session.install(*locked(_lock_without(session, "pymoo")), "-e", ".[dev,ax]")
    session.install(*locked(), "--no-deps", *HEBO_WITHOUT_ITS_PINS)
    # moocore: what the pymoo Ax got first asked for (the lock has no
    # moocore: its pymoo 0.6.0, which replaces that one, does not need it).
    check_locked(session, _python(session), exempt=("moocore",))
    session.run(
        "pytest", "-v", *TORCH_SEARCHER_TESTS, "-k", "hebo or ax", *session.posargs
    )  # fmt: skip


@nox.session(python=PYTHON)
@drops_its_env
def examples_torch(session: nox.Session) -> None:
    """tunecore.examples' PyTorch modules (tests/examples) and Ray's own
    example scripts importing them (mnist_pytorch, pbt_convnet_example...),
    on a synthetic MNIST. uv, not pip, makes this environment: torch comes
    from PyPI here, its CUDA build (which runs on a CPU), unlike in
    `frameworks`. No CPU build of torchvision is reachable (only PyPI's),
    and PyPI's torchvision 0.28.0 does not import on `CPU_TORCH`: its `_C.so`
    needs torch's libc10_cuda.so and libtorch_cuda.so, so the ops fail to
    load and `import torchvision` raises "operator torchvision::nms does not
    exist" (torchvision/_meta_registrations.py). The CUDA build is 4.6 GB of
    wheels, which uv fetched from PyPI into an empty cache in 56 s here."""
    session.install(*locked(), "-e", ".[dev,torchvision]")
    check_locked(session, _python(session))
    session.run("pytest", "-v", "tests/examples", *session.posargs)


@nox.session(python=PYTHON, reuse_venv=False)
def latest(session: nox.Session) -> None:
    """The suite against today's newest release of every dependency and extra,
    ignoring the lock (not in CI: run it on purpose, then `./dev lock --upgrade`
    once it passes)."""
    session.install("--upgrade", "--refresh", "-e", ".[dev]")
    session.run("python", *STUBTEST)
    session.run("pytest", "-q", *session.posargs)


@nox.session(venv_backend="none")
def lock(session: nox.Session) -> None:
    """Refreshes requirements/dev.lock and the user locks (`USER_LOCK`,
    `APART_HINTS`') from pyproject.toml, keeping the locked versions that
    still fit; `./dev lock --upgrade` takes the newest."""
    compile_into = ("uv", "pip", "compile", "--quiet", "--custom-compile-command", "./dev lock")
    session.run(*compile_into, *LOCK_INPUTS, "-o", LOCK, *session.posargs, external=True)
    apart = {hint.partition("[")[2].rstrip("]"): lock for hint, lock in APART_HINTS.items()}
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    user_extras = [extra for extra in extras if extra not in {"dev", "bench", *apart}]
    for output, chosen in ((USER_LOCK, user_extras), *((lock, [x]) for x, lock in apart.items())):
        session.run(
            *compile_into, "pyproject.toml", INSTALLERS, *(f"--extra={x}" for x in chosen),
            "--constraint=requirements/lock-constraints.txt", "--universal",
            f"--python-version={PYTHON}", "-o", output, *session.posargs,
            external=True,
        )  # fmt: skip


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks; ratios are measured side by side in one run, against the
    Ray Tune the lock pins to tunecore's own Ray."""
    session.install(*locked(), "-e", ".[bench]")
    check_locked(session, _python(session))
    session.run("python", "-m", "benchmarks", *session.posargs)


@nox.session(python=PYTHON)
def examples(session: nox.Session) -> None:
    """Every example end to end (on a local Ray, scikit-learn for
    asha_sklearn, Hypothesis for custom_scheduler)."""
    session.install(*locked(), "-e", ".[examples,testing]")
    check_locked(session, _python(session))
    for example in ("quickstart.py", "asha_sklearn.py", "pbt.py", "custom_scheduler.py"):
        session.run("python", f"examples/{example}", *session.posargs)


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The main job: a real tuning run on a local Ray (examples/quickstart.py)."""
    session.install(*locked(), "-e", ".")
    check_locked(session, _python(session))
    session.run("python", "examples/quickstart.py", *session.posargs)
