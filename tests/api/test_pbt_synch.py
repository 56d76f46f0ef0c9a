"""Synchronous PBT, `custom_explore_fn` and `log_config` end to end on the
in-process executor: a driver killed anywhere resumes to the decisions the
uninterrupted run made; the log replays without the user's function; the
policy files are Ray's, and `PopulationBasedTrainingReplay` trains a trial
along one. A `Crash` raised from a callback stands for the driver dying."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.schedulers import PopulationBasedTraining, PopulationBasedTrainingReplay
from tunecore.shell.callbacks import Callback
from tunecore.shell.replay import replay

from .climbing import climb
from .test_restore import Crash, CrashAfter

ITERATIONS = 12


def climbing(config: dict[str, Any]) -> None:
    """`climb` for `ITERATIONS` steps."""
    climb(config, ITERATIONS, report_lr=True)


def clip_lr(config: dict[str, Any]) -> dict[str, Any]:
    """A user's explore step after PBT's: keep lr under 0.8, count explores."""
    config["lr"] = min(config["lr"], 0.8)
    config["explored"] = config["explored"] + 1
    return config


def experiment(
    root: Path,
    *callbacks: Callback,
    custom: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Tuner:
    return Tuner(
        climbing,
        param_space={"lr": tunecore.uniform(0.0, 1.0), "explored": 0},
        tune_config=TuneConfig(
            metric="score",
            mode="max",
            num_samples=4,
            seed=11,
            # All of the executor's CPUs: one trial at a time, one order of
            # events, so runs compare exactly.
            resources_per_trial={"cpu": float(os.cpu_count() or 1)},
            scheduler=PopulationBasedTraining(
                time_attr="training_iteration",
                perturbation_interval=3,
                hyperparam_mutations={"lr": tunecore.uniform(0.0, 1.0)},
                quantile_fraction=0.25,
                seed=5,
                synch=True,
                custom_explore_fn=custom,
            ),
        ),
        run_config=RunConfig(
            name="exp",
            storage_path=str(root),
            verbose=0,
            executor="in_process",
            callbacks=list(callbacks),
        ),
    )


def decisions(scheduler: object) -> str:
    """The scheduler's whole state as JSON, trial ids shorn of their
    experiment's prefix (each experiment draws its own)."""
    assert isinstance(scheduler, PopulationBasedTraining)
    text = msgspec.json.encode(scheduler).decode()
    for prefix in {trial_id.split("_")[0] for trial_id in scheduler.members}:
        text = text.replace(f"{prefix}_", "")
    return text


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, PopulationBasedTraining]:
    root = tmp_path_factory.mktemp("baseline")
    grid = experiment(root).fit()
    assert not grid.errors
    assert all(result.metrics["training_iteration"] == ITERATIONS for result in grid)
    scheduler = replay(root / "exp").state.scheduler
    assert isinstance(scheduler, PopulationBasedTraining)
    assert scheduler.num_perturbations >= 2, "too few exploits to compare"
    return root / "exp", scheduler


def test_every_trial_is_perturbed_at_the_same_barriers(
    uninterrupted: tuple[Path, PopulationBasedTraining],
) -> None:
    directory, scheduler = uninterrupted
    assert scheduler.plans == {}
    assert {m.last_perturbation_time for m in scheduler.members.values()} == {12.0}
    # Every exploit happened at a barrier: the exploited trial's iteration
    # then is the barrier's, or the one before for the trial whose result
    # completed the barrier (Ray's line has each trial's last recorded result).
    lines = [json.loads(line) for line in (directory / "pbt_global.txt").read_text().splitlines()]
    assert len(lines) == scheduler.num_perturbations
    assert {line[2] % 3 for line in lines} <= {0, 2}


@pytest.mark.parametrize(
    "results",
    [
        pytest.param(7, id="mid-interval"),
        pytest.param(14, id="at-a-barrier"),
        pytest.param(27, id="after-exploits"),
    ],
)
def test_a_synch_pbt_experiment_killed_anywhere_resumes_to_the_same_decisions(
    tmp_path: Path, uninterrupted: tuple[Path, PopulationBasedTraining], results: int
) -> None:
    with pytest.raises(Crash):
        experiment(tmp_path, CrashAfter(results=results)).fit()
    directory = tmp_path / "exp"
    grid = Tuner.restore(str(directory), climbing).fit()
    assert not grid.errors
    final = replay(directory)
    assert final.snapshots_verified >= 1
    assert decisions(final.state.scheduler) == decisions(uninterrupted[1])


def test_custom_explore_fn_answers_are_in_the_log_and_replay_needs_no_function(
    tmp_path: Path,
) -> None:
    """The function ran in the shell; the log holds its answers, so
    replaying it (no function in sight) gives the live run's state."""
    grid = experiment(tmp_path, custom=clip_lr).fit()
    assert not grid.errors
    explored = [result.config["explored"] for result in grid]
    assert any(explored), "no exploit: nothing to check"
    clipped = [result.config["lr"] for result in grid if result.config["explored"]]
    assert all(isinstance(lr, float) and lr <= 0.8 for lr in clipped)
    scheduler = replay(tmp_path / "exp").state.scheduler
    assert isinstance(scheduler, PopulationBasedTraining)
    assert scheduler.explore_function is None  # decoded: the place, not the function
    assert scheduler.custom_answers == scheduler.num_perturbations
    configs = sorted(json.dumps(result.config, sort_keys=True) for result in grid)
    replayed = sorted(json.dumps(m.config, sort_keys=True) for m in scheduler.members.values())
    assert replayed == configs


def test_log_config_writes_rays_policy_files_and_the_replay_follows_one(
    tmp_path: Path, uninterrupted: tuple[Path, PopulationBasedTraining]
) -> None:
    directory = uninterrupted[0]
    policies = sorted(directory.glob("pbt_policy_*.txt"))
    assert policies, "no trial was exploited"
    # The trial exploited last: its file is its donor's, plus that exploit.
    lines = [json.loads(line) for line in policies[-1].read_text().splitlines()]
    for line in lines:
        assert len(line) == 6
        trial_tag, donor_tag, _, _, donor_config, config = line
        assert isinstance(trial_tag, str)
        assert isinstance(donor_tag, str)
        assert set(donor_config) == set(config) == {"lr", "explored"}
    replay_scheduler = PopulationBasedTrainingReplay(str(policies[-1]))
    assert replay_scheduler.config is not None
    grid = Tuner(
        climbing,
        tune_config=TuneConfig(scheduler=replay_scheduler),
        run_config=RunConfig(
            name="replayed", storage_path=str(tmp_path), verbose=0, executor="in_process"
        ),
    ).fit()
    (result,) = grid
    assert result.error is None
    # It trained along the schedule: each change from its step on.
    assert result.metrics_dataframe is not None
    rows = result.metrics_dataframe.to_dict("records")
    schedule = [(0, replay_scheduler.config["lr"])] + [
        (change.step, change.config["lr"]) for change in replay_scheduler.changes
    ]
    for row in rows:
        step = row["training_iteration"]
        expected = [lr for at, lr in schedule if at < step][-1]
        assert row["lr"] == expected, (step, schedule)
    assert result.config == replay_scheduler.changes[-1].config
