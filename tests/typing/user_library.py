"""A program embedding tunecore as a typed library (not the Ray-compat
facade), as docs/offline-lab.md and docs/api.md document it: the core
stepped by hand, a scheduler driven and property-tested offline, a
simulated experiment, its replay, and reading it back. It must pass a
user's plain `mypy --strict` (`tests/test_user_typing.py`) and run
(`tests/test_user_library.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import tunecore
from tunecore import ExperimentAnalysis, ResultGrid, RunConfig, TuneConfig
from tunecore.api.whatif import WhatIf, what_if
from tunecore.core.experiment import (
    ExperimentConfig,
    ExperimentState,
    Stepped,
    new_experiment,
    step,
)
from tunecore.core.search import BasicVariantGenerator
from tunecore.model import (
    ClusterResourcesChanged,
    ExperimentEvent,
    Rejection,
    Resources,
    ResultReported,
    StartTrial,
)
from tunecore.schedulers import ASHAScheduler, HyperBandScheduler
from tunecore.testing import PolicyDriver
from tunecore.testing.check import check_policy


def accepted(state: ExperimentState, event: ExperimentEvent) -> Stepped:
    """`step`, narrowed: an illegal event is a `Rejection`, never an exception."""
    outcome = step(state, event)
    if isinstance(outcome, Rejection):
        raise ValueError(str(outcome))
    return outcome


def core_by_hand() -> list[str]:
    """The first trials the core starts on 2 CPUs, one of them ended."""
    space = {"lr": tunecore.uniform(0.001, 0.1)}
    searcher = BasicVariantGenerator(space, num_samples=4, seed=0)
    state = new_experiment(ExperimentConfig(trainable_name="train"), searcher=searcher)
    state, commands = accepted(state, ClusterResourcesChanged(at=0.0, total=Resources(cpu=2)))
    started = [command.trial_id for command in commands if isinstance(command, StartTrial)]
    done = ResultReported(trial_id=started[0], at=1.0, result={"done": True})
    state, commands = accepted(state, done)
    started += [command.trial_id for command in commands if isinstance(command, StartTrial)]
    unknown = step(state, ResultReported(trial_id="nobody", at=2.0, result={}))
    assert isinstance(unknown, Rejection), unknown
    return started


def policy_by_hand() -> list[str]:
    """ASHA driven by hand: the trials started after the second result."""
    driver = PolicyDriver(ASHAScheduler(metric="loss", mode="min", max_t=9), cpus=2)
    a, b, _ = driver.add({"lr": 0.1}), driver.add({"lr": 0.2}), driver.add({"lr": 0.3})
    assert driver.result(a, loss=0.5) == "CONTINUE"
    assert driver.result(b, loss=0.9) == "STOP"
    return driver.started()


def property_test() -> None:
    check_policy(lambda: ASHAScheduler(metric="loss", mode="min", max_t=9))


def curve(config: Mapping[str, object], iteration: int) -> tuple[dict[str, float], float]:
    """A learning curve as a user types one: plain floats out."""
    lr = config["lr"]
    assert isinstance(lr, float)
    return {"loss": (lr - 0.01) ** 2 + 1 / iteration}, 1.0


def simulated(storage: Path) -> Path:
    """A whole ASHA experiment over `curve` in virtual time; its directory."""
    grid = tunecore.simulate(
        curve,
        param_space={"lr": tunecore.loguniform(1e-4, 1e-1)},
        tune_config=TuneConfig(
            metric="loss", mode="min", num_samples=8, seed=3, scheduler=ASHAScheduler(max_t=9)
        ),
        run_config=RunConfig(name="lab", storage_path=str(storage)),
        max_iterations=9,
    )
    assert grid.experiment_path is not None
    return Path(grid.experiment_path)


def read_back(path: Path) -> tuple[dict[str, object], WhatIf]:
    """The experiment replayed twice (the same states and commands), read
    as results, and run again under HyperBand."""
    first, second = tunecore.replay(path), tunecore.replay(path)
    assert (first.state, first.commands) == (second.state, second.commands)
    grid = ResultGrid.from_path(path)
    best = grid.get_best_result()
    assert len(grid.get_dataframe()) == len(grid)
    analysis = ExperimentAnalysis(str(path))
    assert analysis.best_config == best.config
    return best.config, what_if(path, HyperBandScheduler(max_t=9))
