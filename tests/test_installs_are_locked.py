"""Every install a test environment makes on a fresh machine comes from a
lock in the repository: a fresh clone once failed its own tests because a
dependency no lock held released a new version.

The installs are in noxfile.py (each session's), `./dev` (its bootstrap of
nox and uv) and nowhere else: `.ci/run`, the scripts, the tests and the
library install nothing. noxfile.py holds each install to a lock with
`locked` (a user's command written as is: `pip_locked`) and checks each
environment against it afterwards (`check_locked`); the tests here hold
the files to that, and `unlocked`, the check, to what it must find. The
`latest` session alone installs the day's newest releases, on purpose.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNLOCKED_SESSIONS = {"latest": "tries today's newest releases on purpose (not in CI)"}


@functools.cache
def _noxfile() -> ModuleType:
    """noxfile.py, loaded once (each load registers its sessions with nox)."""
    spec = importlib.util.spec_from_file_location("noxfile_under_test", ROOT / "noxfile.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _strings(node: ast.Call) -> list[str]:
    """The string constants a call passes, in tuples and lists too."""
    found = []
    for arg in node.args:
        value = arg.value if isinstance(arg, ast.Starred) else arg
        items = value.elts if isinstance(value, ast.Tuple | ast.List) else [value]
        found += [
            i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)
        ]
    return found


def _installs(function: ast.FunctionDef) -> Iterator[ast.Call]:
    """The calls in `function` that install: `session.install(...)`, and a
    command run with `install` among its words (`pip install`, `uv pip install`)."""
    for node in ast.walk(function):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "install" or (node.func.attr == "run" and "install" in _strings(node)):
            yield node


def _calls(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _is_locked(call: ast.Call) -> bool:
    """Whether an install passes `*locked(...)`, or runs with `env=pip_locked(...)`."""
    starred = any(isinstance(a, ast.Starred) and _calls(a.value, "locked") for a in call.args)
    in_env = any(k.arg == "env" and _calls(k.value, "pip_locked") for k in call.keywords)
    return starred or in_env


def _functions() -> list[ast.FunctionDef]:
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    return [node for node in tree.body if isinstance(node, ast.FunctionDef)]


def test_every_install_in_the_noxfile_is_held_to_a_lock() -> None:
    unheld = [
        f"noxfile.py:{call.lineno} ({function.name}): {ast.unparse(call)}"
        for function in _functions()
        if function.name not in UNLOCKED_SESSIONS
        for call in _installs(function)
        if not _is_locked(call)
    ]
    assert unheld == []


def test_every_function_that_installs_checks_its_environment_after() -> None:
    unchecked = []
    for function in _functions():
        installs = [call.lineno for call in _installs(function)]
        if function.name in UNLOCKED_SESSIONS or not installs:
            continue
        checks = [
            n.lineno
            for n in ast.walk(function)
            if isinstance(n, ast.Call) and _calls(n, "check_locked")
        ]
        if not checks or max(checks) < max(installs):
            unchecked.append(function.name)
    assert unchecked == []


def test_no_environment_is_seeded_or_built_with_the_days_newest() -> None:
    """`uv venv --seed` fetches the newest pip; `python -m build` without
    `--no-isolation` builds with the newest setuptools."""
    found = []
    for function in _functions():
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            words = _strings(node)
            seeded = "--seed" in words
            isolated_build = "build" in words and "-m" in words and "--no-isolation" not in words
            if seeded or isolated_build:
                found.append(f"noxfile.py:{node.lineno}: {ast.unparse(node)}")
    assert found == []


def test_the_only_unlocked_session_is_latest_and_it_is_not_in_ci() -> None:
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    sessions = set(re.findall(r"^@nox\.session.*\n(?:@.*\n)*def (\w+)\(", noxfile, re.MULTILINE))
    assert set(UNLOCKED_SESSIONS) <= sessions
    dev = (ROOT / "dev").read_text(encoding="utf-8")
    run_by_test = re.findall(r'exec "\$\{NOX\[@\]\}" -s ([a-z_ ]+)', dev)
    assert run_by_test, "./dev test no longer names its sessions: update this test"
    assert not set(UNLOCKED_SESSIONS) & {s for line in run_by_test for s in line.split()}
    assert not set(UNLOCKED_SESSIONS) & set(_noxfile().nox.options.sessions)


def test_dev_bootstraps_its_tools_from_the_lock() -> None:
    """nox's own dependencies (virtualenv, filelock, argcomplete...) are
    pinned by the lock, nox and uv by tools.txt: the bootstrap once took
    the day's filelock 4 where the lock holds 3."""
    installs = [
        line
        for line in (ROOT / "dev").read_text(encoding="utf-8").replace("\\\n", " ").splitlines()
        if re.search(r"\bpip\b.*\binstall\b", line) and not line.lstrip().startswith("#")
    ]
    assert installs, "./dev no longer bootstraps with pip: update this test"
    assert all("-c requirements/dev.lock" in line for line in installs), installs


def _installs_in_code(tree: ast.Module) -> Iterator[ast.Call]:
    """Calls that run `pip install` or `uv pip install` (`subprocess.run([...])`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            words = _strings(node)
            if "install" in words and ({"pip", "uv"} & set(words)):
                yield node


def test_nothing_else_installs() -> None:
    """The scripts, the tests, the benchmarks and the library run no `pip
    install` (nor `uv pip install`), and CI's script only through ./dev."""
    found = [
        f"{path.relative_to(ROOT)}:{call.lineno}: {ast.unparse(call)}"
        for folder in ("src", "tests", "scripts", "benchmarks", "examples")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for call in _installs_in_code(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    ]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    found += [line for line in ci if re.search(r"\b(pip|uv)\b.*\binstall\b", line)]
    assert found == []


def test_the_scan_finds_an_unheld_install() -> None:
    code = (
        "def tests(session):\n"
        "    session.install('-c', LOCK, '-e', '.[dev]')\n"
        "    session.run(python, '-m', 'pip', 'install', *hints)\n"
        "    session.run('uv', 'pip', 'install', *locked(), 'x')\n"
        "    session.run(python, '-m', 'pip', 'install', 'y', env=pip_locked(LOCK))\n"
    )
    (function,) = ast.parse(code).body
    assert isinstance(function, ast.FunctionDef)
    assert [_is_locked(call) for call in _installs(function)] == [False, False, True, True]
    run = ast.parse("subprocess.run([sys.executable, '-m', 'pip', 'install', x])")
    assert len(list(_installs_in_code(run))) == 1


LOCK_TEXT = """\
numpy==2.4.6 ; python_full_version < '3.12'
numpy==2.5.5 ; python_full_version >= '3.12'
    # via pandas
torch==2.13.0
pip==26.3
"""


@pytest.mark.parametrize(
    ("frozen", "strays"),
    [
        ("numpy==2.4.6\ntorch==2.13.0+cpu\npip==26.3\n", []),
        ("numpy==2.5.5\ntunecore @ file:///d/tunecore-0.1.0-py3-none-any.whl\n", []),
        (f"-e {ROOT.as_uri()}\n", []),
        ("-e file:///elsewhere/optuna\n", ["-e file:///elsewhere/optuna"]),
        ("numpy==2.6.0\n", ["numpy==2.6.0"]),
        ("filelock==4.3.2\n", ["filelock==4.3.2"]),
        ("pip==26.4\ntorch==2.13.1+cpu\n", ["pip==26.4", "torch==2.13.1+cpu"]),
        ("numpy @ file:///tmp/numpy.whl\n", ["numpy @ file:///tmp/numpy.whl"]),
    ],
)
def test_unlocked_names_what_the_lock_does_not_pin(frozen: str, strays: list[str]) -> None:
    assert _noxfile().unlocked(frozen, LOCK_TEXT) == strays


def test_unlocked_leaves_the_packages_a_session_installs_on_purpose() -> None:
    assert _noxfile().unlocked("optuna==5.0.0\n", LOCK_TEXT, exempt={"Optuna"}) == []
