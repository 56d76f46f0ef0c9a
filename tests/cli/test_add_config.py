"""`tunecore add DIR --config JSON` checks the config against the
experiment's parameter space (recorded in its log) before it queues it:
a key the space does not have, or a value its domain could not take, is
refused at once naming the key, the value and what is accepted. Such
configs were once queued (exit 0) and the trials then failed in user code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import record_offsets, run
from tunecore.cli import main
from tunecore.model import ResultReported
from tunecore.shell.eventlog import read_log
from tunecore.shell.journal import SnapshotStore
from tunecore.shell.lock import driver_lock

SPACE = {
    "lr": {"loguniform": [1e-4, 1e-1]},
    "optimizer": {"choice": ["sgd", "adam"]},
    "batch": {"grid_search": [32, 64]},
    "width": {"randint": [16, 257]},
    "epochs": 3,
    "model": {"activation": "relu", "depth": {"qrandint": [2, 8, 2]}},
}


def still_running(tmp_path: Path, space: dict[str, object], *options: str) -> Path:
    """An experiment over `space` as if its driver were still running (its
    log cut after the first result: requests are still read)."""
    file = tmp_path / "space.json"
    file.write_text(json.dumps(space))
    assert run(tmp_path, "quadratic", "--param-space", str(file), *options) == 0
    directory = tmp_path / "exp"
    log = read_log(directory)
    first = next(i for i, e in enumerate(log.events) if isinstance(e, ResultReported))
    with (directory / "events.log").open("r+b") as handle:
        handle.truncate(record_offsets(directory)[first + 2])
    for snapshot in SnapshotStore(directory).directory.iterdir():
        snapshot.unlink()
    return directory


@pytest.fixture
def running(tmp_path: Path) -> Path:
    return still_running(tmp_path, SPACE)


@pytest.mark.parametrize(
    ("config", "given", "accepted"),
    [
        ({"lr": "abc"}, "['lr']='abc'", "a number in [0.0001, 0.1]"),
        ({"lr": 0.5}, "['lr']=0.5", "a number in [0.0001, 0.1]"),
        (
            {"nope": 1},
            "['nope']=1",
            "a key of the space (its keys: 'lr', 'optimizer', 'batch', 'width', 'epochs', 'model')",
        ),
        (
            {"optimzer": "sgd"},
            "['optimzer']='sgd'",
            "a key of the space (did you mean 'optimizer'? its keys: 'lr', 'optimizer', "
            "'batch', 'width', 'epochs', 'model')",
        ),
        ({"optimizer": "adma"}, "['optimizer']='adma'", 'one of ["sgd", "adam"]'),
        ({"optimizer": True}, "['optimizer']=True", 'one of ["sgd", "adam"]'),
        ({"width": 16.5}, "['width']=16.5", "an integer in [16, 257)"),
        ({"width": 257}, "['width']=257", "an integer in [16, 257)"),
        ({"batch": "64"}, "['batch']='64'", "a number (the grid's values are [32, 64])"),
        ({"epochs": "3"}, "['epochs']='3'", "a number (the space's constant is 3)"),
        ({"model": "big"}, "['model']='big'", "a table of 'activation', 'depth'"),
        ({"model": {"depth": 3}}, "['model']['depth']=3", "a multiple of 2 in [2, 8]"),
        (
            {"model": {"activation": 1}},
            "['model']['activation']=1",
            'a string (the space\'s constant is "relu")',
        ),
    ],
)
def test_a_config_outside_the_space_is_refused(
    running: Path,
    capsys: pytest.CaptureFixture[str],
    config: dict[str, object],
    given: str,
    accepted: str,
) -> None:
    assert main(["add", str(running), "--config", json.dumps(config)]) == 2
    assert capsys.readouterr().err == (
        f"tunecore add: error: --config{given} does not fit the experiment's parameter "
        f"space: expected {accepted}\n"
    )
    assert not (running / "inbox").exists()


@pytest.mark.parametrize(
    "config",
    [
        {"lr": 0.01, "optimizer": "adam", "batch": 64, "width": 64},
        {"batch": 128},  # a grid lists points to try: another of its kind may be added
        {"epochs": 10},  # a constant: a trial added by hand may set another
        {"model": {"depth": 8, "activation": "gelu"}},
        {},
    ],
)
def test_a_config_within_the_space_is_queued(
    running: Path, capsys: pytest.CaptureFixture[str], config: dict[str, object]
) -> None:
    assert main(["add", str(running), "--config", json.dumps(config)]) == 0
    assert "Queued a trial with config" in capsys.readouterr().out
    assert len(list((running / "inbox").glob("*.json"))) == 1


def test_the_space_is_found_under_a_concurrency_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = still_running(tmp_path, SPACE, "--max-concurrent-trials", "1")
    assert main(["add", str(directory), "--config", '{"lr": "abc"}']) == 2
    assert "--config['lr']='abc' does not fit" in capsys.readouterr().err


def test_an_experiment_without_a_space_takes_no_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = still_running(tmp_path, {})
    assert main(["add", str(directory), "--config", '{"lr": 0.1}']) == 2
    assert "expected no keys: the space is empty" in capsys.readouterr().err
    assert main(["add", str(directory), "--config", "{}"]) == 0


def test_a_request_to_an_experiment_no_driver_runs_says_a_resume_takes_it(
    running: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The driver is gone (killed, or the log cut as here): the request
    waits in the inbox for a resume, and the message says so rather than
    promising a running experiment takes it within a second."""
    assert main(["add", str(running), "--config", "{}"]) == 0
    out = capsys.readouterr().out
    assert "No driver runs the experiment now" in out
    assert f"tunecore resume {running} --trainable MODULE:FUNCTION" in out
    assert "The running experiment" not in out


def test_a_request_to_an_experiment_whose_driver_runs_says_it_takes_it_soon(
    running: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with driver_lock(running):  # this process is the experiment's live driver
        assert main(["add", str(running), "--config", "{}"]) == 0
    out = capsys.readouterr().out
    assert "The running experiment takes it within about a second" in out
    assert "No driver" not in out
