"""What a newcomer gets wrong on the command line (an empty path from an
unset shell variable, a searcher without its objective, a misspelt metric,
an address where no Ray listens, text that is not JSON) is one line naming
the flag and the value, exit code 2, no traceback, nothing started."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

import tunecore
from tests.cli.test_parser import exit_code


def quadratic(config: dict[str, object]) -> None:
    for step in range(1, 4):
        tunecore.report({"loss": float(str(config.get("x", 0.0))) / step})


def run(storage: Path, *options: str) -> int:
    return exit_code(
        [
            "run",
            "tests.cli.test_bad_arguments:quadratic",
            "--executor",
            "in_process",
            "--storage-path",
            str(storage),
            "--name",
            "exp",
            "--verbose",
            "0",
            *options,
        ]
    )


@pytest.fixture
def finished(tmp_path: Path) -> Path:
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"x": {"grid_search": [0.25, 0.75]}}))
    assert run(tmp_path, "--param-space", str(space), "--metric", "loss", "--mode", "min") == 0
    return tmp_path / "exp"


@pytest.mark.parametrize(
    ("argv", "argument"),
    [
        (["status", ""], "DIR"),
        (["replay", " "], "DIR"),
        (["plot", ""], "DIR"),
        (["dashboard", ""], "DIR"),
        (["resume", ""], "DIR"),
        (["stop", "", "t"], "DIR"),
        (["add", "", "--config", "{}"], "DIR"),
        (["simulate", "--from", "", "--scheduler", "asha"], "--from"),
        (["run", ""], "MODULE:FUNCTION"),
        (["run", "m:f", "--storage-path", ""], "--storage-path"),
        (["run", "m:f", "--param-space", ""], "--param-space"),
        (["run", "m:f", "--metric", ""], "--metric"),
        (["run", "m:f", "--address", ""], "--address"),
        (["resume", "somewhere", "--trainable", ""], "--trainable"),
        (["plot", "somewhere", "--metric", ""], "--metric"),
    ],
)
def test_an_empty_value_is_refused_naming_its_argument(
    capsys: pytest.CaptureFixture[str], argv: list[str], argument: str
) -> None:
    assert exit_code(argv) == 2
    error = capsys.readouterr().err
    assert f"error: argument {argument}: " in error
    assert "is empty" in error
    assert "Traceback" not in error


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--search", "optuna"], "tunecore run: error: --search optuna needs --metric"),
        (
            ["--search", "hyperopt", "--metric", "loss"],
            "tunecore run: error: --search hyperopt needs --mode",
        ),
    ],
)
def test_a_model_based_search_without_its_objective_starts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], expected: str
) -> None:
    assert run(tmp_path, *options) == 2
    assert expected in capsys.readouterr().err
    assert not (tmp_path / "exp").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["plot", "{dir}", "--metric", "los", "--out", "{dir}/curves.png"],
        ["simulate", "--from", "{dir}", "--scheduler", "asha", "--metric", "los"],
    ],
)
def test_a_metric_no_trial_reported_is_an_error_not_an_empty_picture(
    finished: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert exit_code([arg.format(dir=finished) for arg in argv]) == 2
    assert f"{finished}: --metric 'los': no trial reported" in (capsys.readouterr().err)
    assert not (finished / "curves.png").exists()


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A local port that refuses connections: bound, never listening."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield int(bound.getsockname()[1])


def test_an_address_where_nothing_listens_is_refused_before_ray_is_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], closed_port: int
) -> None:
    address = f"127.0.0.1:{closed_port}"
    assert exit_code(["run", "m:f", "--storage-path", str(tmp_path), "--address", address]) == 2
    assert f"tunecore run: error: --address {address}: no Ray head answers there" in (
        capsys.readouterr().err
    )


def test_resume_at_an_unknown_host_is_refused(
    finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address = "no-such-host.invalid:6379"
    argv = ["resume", str(finished), "--trainable", "m:f", "--address", address]
    assert exit_code(argv) == 2
    assert f"--address {address}: the host 'no-such-host.invalid' is unknown" in (
        capsys.readouterr().err
    )


def test_an_address_with_no_port_number_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "m:f", "--storage-path", str(tmp_path), "--address", "head:port"]
    assert exit_code(argv) == 2
    assert "--address head:port: 'port' is not a port number" in capsys.readouterr().err


def test_config_text_that_is_not_json_is_quoted(
    finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert exit_code(["add", str(finished), "--config", "lr=0.1"]) == 2
    assert "--config 'lr=0.1' is not valid JSON" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["status", "foo://x/y"], "foo://x/y"),
        (["replay", "foo://x/y"], "foo://x/y"),
        (["plot", "foo://x/y"], "foo://x/y"),
        (["dashboard", "foo://x/y"], "foo://x/y"),
        (["resume", "foo://x/y"], "foo://x/y"),
        (["stop", "foo://x/y", "t"], "foo://x/y"),
        (["add", "foo://x/y", "--config", "{}"], "foo://x/y"),
        (["simulate", "--from", "foo://x/y", "--scheduler", "asha"], "--from foo://x/y"),
        (["status", "s3:/x"], "s3:/x"),
    ],
)
def test_an_experiment_uri_storage_cannot_reach_is_named_as_typed(
    capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    """The storage layer names a URI as the setting `storage_path`; given
    as DIR (or `--from`), the message names it as the user typed it."""
    assert exit_code(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"tunecore {argv[0]}: error: {named}: "), error
    assert "storage_path" not in error
    assert "Traceback" not in error


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            ["--scheduler", "asha", "--max-t", "0"],
            "tunecore run: error: --max-t=0.0 is invalid for --scheduler asha: "
            "expected a finite number > 0",
        ),
        (
            ["--scheduler", "pbt", "--perturbation-interval", "-1"],
            "tunecore run: error: --perturbation-interval=-1.0 is invalid for --scheduler pbt: ",
        ),
    ],
)
def test_a_schedulers_bad_option_is_named_by_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], expected: str
) -> None:
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"x": {"uniform": [0, 1]}}))
    objective = ["--metric", "loss", "--mode", "min"]
    assert run(tmp_path, "--param-space", str(space), *objective, *options) == 2
    error = capsys.readouterr().err
    assert error.startswith(expected), error
    assert "ASHAScheduler" not in error
    assert not (tmp_path / "exp").exists()


@pytest.mark.parametrize("host", ["1.2.3.4.5", "203.0.113.7"])
def test_a_dashboard_host_that_is_not_this_machines_is_named_by_its_flag(
    finished: Path, capsys: pytest.CaptureFixture[str], host: str
) -> None:
    """A name that resolves to nothing, or an address of no interface here
    (TEST-NET-3, documentation only), is the host's fault, not the port's."""
    assert exit_code(["dashboard", str(finished), "--host", host, "--port", "0"]) == 2
    error = capsys.readouterr().err
    expected = f"tunecore dashboard: error: --host {host}: cannot serve on it: "
    assert error.startswith(expected), error
