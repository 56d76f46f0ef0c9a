"""A log never chooses the Ray cluster a resume joins (issue 10, adversarial
re-test): the cluster would receive the user's code and send back pickles.
`Tuner.restore(..., address=)` and `tunecore resume --address` name it, or
Ray chooses as `ray.init()` does; the address the log records is only shown."""

from __future__ import annotations

import socket
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

import tunecore
from tunecore import Tuner
from tunecore.cli import main
from tunecore.core.experiment import ExperimentConfig, new_experiment
from tunecore.core.experiment.snapshot import encode_state
from tunecore.core.search import BasicVariantGenerator
from tunecore.shell.eventlog import LOG_FORMAT, EventLogWriter, LogHeader, RunSettings

RECORDED = "203.0.113.9:6379"
"""The cluster a crafted log names (TEST-NET-3: nothing answers there)."""
TRAINABLE = "tests.api.test_restore_address:steps"


def steps(config: dict[str, object]) -> None:
    tunecore.report({"loss": 1.0})


class Joined(Exception):
    """Raised by the stand-in `ray.init`: the test needs only its address."""


@pytest.fixture
def joined(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The addresses `ray.init` is called with, Ray not being up in this
    process; each call raises `Joined` instead of connecting."""
    addresses: list[str | None] = []

    def init(address: str | None = None, **options: object) -> None:
        addresses.append(address)
        raise Joined

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    return addresses


@pytest.fixture
def experiment(tmp_path: Path) -> Path:
    """An experiment whose log says it ran on the Ray cluster at RECORDED,
    as anyone who can write a file could make it."""
    directory = tmp_path / "exp"
    directory.mkdir()
    state = new_experiment(
        ExperimentConfig(trainable_name=TRAINABLE, trial_id_prefix="t"),
        searcher=BasicVariantGenerator({}, num_samples=1, seed=0),
    )
    header = LogHeader(
        format=LOG_FORMAT,
        tunecore_version="crafted",
        name=directory.name,
        trainable=TRAINABLE,
        settings=RunSettings(executor="ray", address=RECORDED, verbose=0),
        initial_state=encode_state(state),
    )
    EventLogWriter.create(directory, header).close()
    return directory


def test_restore_never_joins_the_cluster_the_log_names_and_says_which_it_was(
    experiment: Path, joined: list[str | None]
) -> None:
    with pytest.warns(UserWarning, match=f"ran on the Ray cluster at '{RECORDED}'"):
        tuner = Tuner.restore(experiment, steps)
    with pytest.raises(Joined):
        tuner.fit()
    assert joined == [None]  # ray.init's own choice: RAY_ADDRESS, else a local Ray


def test_restore_joins_the_cluster_the_user_names(
    experiment: Path, joined: list[str | None]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tuner = Tuner.restore(experiment, steps, address="ray://mine:10001")
    with pytest.raises(Joined):
        tuner.fit()
    assert joined == ["ray://mine:10001"]


def test_ray_address_chooses_without_a_warning(
    experiment: Path, joined: list[str | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_ADDRESS", "mine:6379")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tuner = Tuner.restore(experiment, steps)
    with pytest.raises(Joined):
        tuner.fit()
    assert joined == [None]  # ray.init reads RAY_ADDRESS itself


@pytest.fixture
def listening() -> Iterator[str]:
    """A HOST:PORT where something accepts connections, as a Ray head's
    port does: the CLI checks that before it asks Ray to join."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"127.0.0.1:{server.getsockname()[1]}"


@pytest.mark.filterwarnings("ignore:.*ran on the Ray cluster")
@pytest.mark.parametrize("given", [False, True], ids=["no-address", "address"])
def test_the_cli_resume_joins_only_the_cluster_given_by_address(
    experiment: Path, joined: list[str | None], listening: str, given: bool
) -> None:
    options = ["--address", listening] if given else []
    with pytest.raises(Joined):
        main(["resume", str(experiment), "--trainable", TRAINABLE, *options])
    assert joined == [listening if given else None]
