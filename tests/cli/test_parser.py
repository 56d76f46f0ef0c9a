"""The command line's arguments: every option explained, no abbreviated
flag taken for another, a misspelt one answered with the command's usage
and the flag it was probably meant to be, and messages that name the
flags the user typed, not the Python API's settings."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import tunecore
from tunecore.cli import EXIT_CODES, main
from tunecore.cli.errors import EXIT_FAILED
from tunecore.cli.parser import Parser, build_parser


def quadratic(config: dict[str, object]) -> None:
    for step in range(1, 3):
        tunecore.report({"loss": float(str(config.get("x", 0.0))) / step})


def parsers() -> Iterator[tuple[str, Parser]]:
    """The top-level parser and each command's, by name."""
    top = build_parser(EXIT_CODES)
    yield "tunecore", top
    yield from top.commands.items()


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit_:  # argparse's own usage errors
        return int(str(exit_.code))


def run(tmp_path: Path, *options: str) -> int:
    common = ["--executor", "in_process", "--storage-path", str(tmp_path), "--name", "exp"]
    return exit_code(["run", "tests.cli.test_parser:quadratic", *common, *options])


def test_every_option_of_every_command_has_help() -> None:
    missing = [
        f"{name} {action.option_strings or action.dest}"
        for name, parser in parsers()
        for action in parser.arguments
        if not action.help
    ]
    assert missing == []


def test_no_parser_takes_an_abbreviated_flag() -> None:
    assert [name for name, parser in parsers() if parser.allow_abbrev] == []


@pytest.mark.parametrize(
    ("argv", "misspelt", "suggestion"),
    [
        (["run", "m:f", "--num-sample", "3"], "--num-sample 3", "--num-samples"),
        (["run", "m:f", "--metrc", "loss"], "--metrc loss", "--metric"),
        (
            ["simulate", "--from", "d", "--scheduler", "asha", "--reduction-factr", "3"],
            "--reduction-factr 3",
            "--reduction-factor",
        ),
        (["status", "d", "--truncate"], "--truncate", None),
        (["resume", "d", "--resume-erored"], "--resume-erored", "--resume-errored"),
    ],
)
def test_a_misspelt_option_shows_the_commands_usage_and_the_flag_it_meant(
    capsys: pytest.CaptureFixture[str], argv: list[str], misspelt: str, suggestion: str | None
) -> None:
    assert exit_code(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"usage: tunecore {argv[0]} ")
    last = error.splitlines()[-1]
    expected = f"tunecore {argv[0]}: error: unrecognized arguments: {misspelt}"
    if suggestion is not None:
        expected += f" (did you mean {suggestion}?)"
    assert last == expected


def fails(config: dict[str, object]) -> None:
    raise ValueError("this trial always fails")


def test_resume_takes_the_verbosity_run_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--executor", "in_process", "--storage-path", str(tmp_path), "--name", "exp"]
    exit_code(["run", "tests.cli.test_parser:fails", *common, "--verbose", "0"])  # recorded: silent
    capsys.readouterr()
    trainable = "tests.cli.test_parser:fails"
    # Retrying the errored trial runs again (a finished experiment would not).
    resume = ["resume", str(tmp_path / "exp"), "--trainable", trainable, "--resume-errored"]
    assert exit_code(resume) == EXIT_FAILED
    assert "== Status ==" not in capsys.readouterr().out
    assert exit_code([*resume, "--verbose", "1"]) == EXIT_FAILED
    assert "== Status ==" in capsys.readouterr().out


def test_the_search_seed_is_given_as_the_flag_that_repeats_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"x": {"uniform": [0, 1]}}))
    assert run(tmp_path, "--param-space", str(space)) == 0
    out = capsys.readouterr().out
    found = re.search(r"Search seed: (\d+) \(pass --seed (\d+) to repeat\)", out)
    assert found is not None, out
    assert found.group(1) == found.group(2)
    assert "TuneConfig" not in out


def test_a_result_without_the_metric_names_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(tmp_path, "--metric", "accuracy", "--mode", "max", "--verbose", "1") == 1
    out = capsys.readouterr().out
    assert "without the metric 'accuracy' that --metric expects" in out
    assert "TuneConfig" not in out


def test_the_python_api_still_names_its_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The flags are the command line's alone: a script is told of the
    settings it passes."""
    tuner = tunecore.Tuner(
        quadratic,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=tunecore.TuneConfig(metric="accuracy", mode="max"),
        run_config=tunecore.RunConfig(storage_path=str(tmp_path), executor="in_process"),
    )
    results = tuner.fit()
    out = capsys.readouterr().out
    assert re.search(r"pass TuneConfig\(seed=\d+\) to repeat", out), out
    assert "that TuneConfig(metric=...) expects" in str(results.errors[0])


def test_a_space_the_search_cannot_take_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found only as the run starts, it once surfaced as a traceback (exit 1)."""
    pytest.importorskip("optuna")
    space = tmp_path / "space.json"
    space.write_text(json.dumps({"x": {"grid_search": [0.25, 0.75]}}))
    options = ["--param-space", str(space), "--search", "optuna", "--metric", "loss"]
    assert run(tmp_path, *options, "--mode", "min") == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert error.startswith("tunecore run: error: param_space['x']=GridSearch(")


def test_a_missing_metric_is_asked_for_by_flag_in_the_cli_and_by_argument_in_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tunecore.api.plot import collect  # noqa: PLC0415
    from tunecore.api.whatif import what_if  # noqa: PLC0415
    from tunecore.schedulers import ASHAScheduler  # noqa: PLC0415

    assert run(tmp_path, "--verbose", "0") == 0  # no --metric
    directory = tmp_path / "exp"
    capsys.readouterr()
    assert exit_code(["simulate", "--from", str(directory), "--scheduler", "asha"]) == 2
    assert capsys.readouterr().err.endswith("names no metric and mode; pass --metric and --mode\n")
    assert exit_code(["plot", str(directory)]) == 2
    assert capsys.readouterr().err.endswith("no metric to plot (pass one: --metric)\n")
    with pytest.raises(ValueError, match=r"pass what_if\(metric=...\) and what_if\(mode=...\)"):
        what_if(directory, ASHAScheduler())
    with pytest.raises(ValueError, match=r"pass one: collect\(metric=...\)"):
        collect(directory)
