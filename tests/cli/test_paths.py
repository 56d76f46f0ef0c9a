"""Every path a command takes, refused at once when it cannot serve: one
line naming the flag and the value, exit 2, nothing started. Such paths
once surfaced as an `OSError` traceback (exit 1) once the run was under way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.test_cli import finished, unfinished  # noqa: F401 - fixtures
from tunecore.cli import main
from tunecore.shell.replay import replay

UNWRITABLE = Path("/sys")
"""A directory no process may create entries in, root included."""
UNCREATABLE = Path("/proc/forbidden")
"""A directory that cannot be made, root included."""


def refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The one line of error a command refused `argv` with."""
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1, error
    assert "Traceback" not in error
    return error.strip()


def run_argv(*options: str) -> list[str]:
    common = ["--executor", "in_process", "--verbose", "0"]
    return ["run", "tests.test_cli:quadratic", *common, *options]


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    file = tmp_path / "a_file"
    file.write_text("not a directory")
    return file


@pytest.mark.parametrize(
    ("storage", "why"),
    [
        (str(UNCREATABLE), "cannot create a directory there (No such file or directory)"),
        (f"file://{UNCREATABLE}", "cannot create a directory there (No such file or directory)"),
        (str(UNWRITABLE), "cannot create a directory there ("),
        ("{file}", "is a file, not a directory"),
        ("{file}/under", "is under the file {file}, not a directory"),
    ],
)
def test_a_storage_path_that_cannot_hold_experiments_is_refused(
    capsys: pytest.CaptureFixture[str], a_file: Path, storage: str, why: str
) -> None:
    storage = storage.format(file=a_file)
    error = refused(capsys, run_argv("--storage-path", storage))
    assert error.startswith(f"tunecore run: error: --storage-path {storage}: ")
    assert why.format(file=a_file) in error


UNREACHABLE_S3 = "s3://k:k@bucket/x?endpoint_override=127.0.0.1:1&scheme=http&region=us-east-1"
"""A bucket behind a port nothing listens on: the connection is refused at once."""


@pytest.mark.parametrize(
    ("storage", "why"),
    [
        ("foo://bar/x", "unknown scheme 'foo'"),
        ("s3:/x", "a URI needs '://' after its scheme 's3'"),
        ("s3://", "names no bucket"),
        ("s3://bucket/../x", "its path holds the component '..'"),
        ("file://relative/x", "a file:// URI names a local absolute directory"),
        (UNREACHABLE_S3, "cannot be reached ("),
    ],
)
def test_a_storage_uri_that_names_no_reachable_storage_is_refused_naming_the_flag_once(
    capsys: pytest.CaptureFixture[str], storage: str, why: str
) -> None:
    """Such URIs once failed with a traceback once the run had started, or
    named the flag and then the Python setting: `--storage-path='foo://x'
    is invalid: storage_path 'foo://x': ...`."""
    error = refused(capsys, run_argv("--storage-path", storage))
    assert error.startswith(f"tunecore run: error: --storage-path {storage}: {why}"), error
    assert error.count("--storage-path") == 1, error
    assert "storage_path" not in error


def test_a_name_that_is_a_file_in_the_storage_path_is_refused(
    capsys: pytest.CaptureFixture[str], a_file: Path
) -> None:
    error = refused(capsys, run_argv("--storage-path", str(a_file.parent), "--name", a_file.name))
    assert (
        error == f"tunecore run: error: --name {a_file.name}: {a_file} is a file, not a directory"
    )


def test_a_param_space_that_cannot_be_read_names_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "space.toml"
    error = refused(capsys, run_argv("--param-space", str(missing)))
    assert error == (
        f"tunecore run: error: --param-space {missing}: cannot read it (No such file or directory)"
    )


@pytest.mark.parametrize(
    ("out", "why"),
    [
        (f"{UNCREATABLE}/curves.png", f"cannot write a file there ({UNCREATABLE} does not exist)"),
        ("{file}/curves.png", "cannot write a file there ({file} is not a directory)"),
        (f"{UNWRITABLE}/curves.png", "cannot write a file there ("),
        ("{tmp}", "is a directory, not a file"),
    ],
)
def test_a_plot_file_that_cannot_be_written_is_refused(
    capsys: pytest.CaptureFixture[str],
    finished: Path,  # noqa: F811 - the fixture
    a_file: Path,
    out: str,
    why: str,
) -> None:
    out = out.format(file=a_file, tmp=a_file.parent)
    why = why.format(file=a_file)
    error = refused(capsys, ["plot", str(finished), "--out", out])
    assert error.startswith(f"tunecore plot: error: --out {out}: {why}")
    simulate = ["simulate", "--from", str(finished), "--scheduler", "asha", "--plot", out]
    error = refused(capsys, simulate)
    assert error.startswith(f"tunecore simulate: error: --plot {out}: {why}")


def test_simulate_names_its_from_flag(capsys: pytest.CaptureFixture[str], a_file: Path) -> None:
    error = refused(capsys, ["simulate", "--from", str(a_file), "--scheduler", "asha"])
    assert error == f"tunecore simulate: error: --from {a_file} is not a directory"


@pytest.mark.parametrize("command", ["stop", "add"])
def test_a_request_that_cannot_be_posted_is_refused(
    capsys: pytest.CaptureFixture[str],
    unfinished: Path,  # noqa: F811 - the fixture
    command: str,
) -> None:
    """The experiment's inbox is a file: the request cannot be written."""
    (unfinished / "inbox").write_text("in the way")
    trial = next(iter(replay(unfinished, verify=False).state.trials))
    argv = {"stop": [trial], "add": ["--config", '{"x": 0.5}']}[command]
    error = refused(capsys, [command, str(unfinished), *argv])
    inbox = unfinished / "inbox"
    assert error.startswith(
        f"tunecore {command}: error: {unfinished}: cannot post the request to {inbox}"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in any directory it may enter")
@pytest.mark.parametrize(
    "argv",
    [
        ["resume", "{dir}", "--trainable", "tests.test_cli:quadratic"],
        ["replay", "{dir}", "--truncate"],
        ["add", "{dir}", "--config", '{"x": 0.5}'],
    ],
)
def test_an_experiment_that_cannot_be_written_is_refused(
    capsys: pytest.CaptureFixture[str],
    unfinished: Path,  # noqa: F811 - the fixture
    argv: list[str],
) -> None:
    unfinished.chmod(0o555)
    try:
        error = refused(capsys, [arg.format(dir=unfinished) for arg in argv])
    finally:
        unfinished.chmod(0o755)
    assert f"error: {unfinished}: cannot write in it (Permission denied)" in error
