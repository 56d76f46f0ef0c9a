"""PBT with more trials than fit at once takes turns, as Ray's asynchronous
PBT does: at a perturbation a trial pauses when another waits, and the
least-trained waiting trial starts next (in-process executor; each trial
asks for half of this machine's CPUs, so two fit)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import tunecore
from tunecore import TuneConfig, Tuner
from tunecore.model import (
    CheckpointSaved,
    CheckpointStorage,
    JsonValue,
    PauseTrial,
    ResetTrial,
    SaveCheckpoint,
)
from tunecore.schedulers import PopulationBasedTraining
from tunecore.shell.callbacks import Callback
from tunecore.shell.eventlog import read_log
from tunecore.shell.trial_view import Trial

from .test_missing_checkpoints import run_config, scoring

RATES: list[JsonValue] = [0.5, 1.0, 2.0, 3.0]
LOWEST_RATE = 0.5


class Starts(Callback):
    """What started and what completed, in order."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    def on_trial_start(self, iteration: int, trials: object, trial: Trial) -> None:
        self.log.append(("start", trial.trial_id))

    def on_trial_complete(self, iteration: int, trials: object, trial: Trial) -> None:
        self.log.append(("complete", trial.trial_id))


def run(tmp_path: Path, take_turns: bool | None) -> tuple[list[tuple[str, str]], list[float]]:
    pbt = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=2,
        hyperparam_mutations={"rate": RATES},
        quantile_fraction=0.25,
        seed=3,
        take_turns=take_turns,
    )
    starts = Starts()
    half = (os.cpu_count() or 1) / 2
    results = Tuner(
        tunecore.with_resources(scoring, {"cpu": half}),
        param_space={"rate": tunecore.grid_search(RATES)},
        tune_config=TuneConfig(metric="score", mode="max", scheduler=pbt),
        run_config=run_config(tmp_path, starts, stop={"training_iteration": 6}),
    ).fit()
    assert results.num_errors == 0
    assert [r.metrics["training_iteration"] for r in results] == [6] * len(RATES)
    scores = [r.metrics["score"] for r in results]
    return starts.log, [score for score in scores if isinstance(score, float)]


def test_a_population_larger_than_the_cluster_takes_turns(tmp_path: Path) -> None:
    log, scores = run(tmp_path, take_turns=None)  # a new experiment: Ray's behaviour
    first_complete = log.index(next(entry for entry in log if entry[0] == "complete"))
    started_before = {trial_id for kind, trial_id in log[:first_complete] if kind == "start"}
    assert len(started_before) == len(RATES), log  # everyone trained before anyone finished
    resumes = len([kind for kind, _ in log if kind == "start"]) - len(RATES)
    assert resumes > 0, log
    # A paused trial resumes from its checkpoint: no score starts over.
    assert len(scores) == len(RATES)
    assert min(scores) >= 6 * LOWEST_RATE


def test_a_run_that_took_turns_replays_to_the_same_end(tmp_path: Path) -> None:
    """Its pauses, resumes and exploits are all in the event log: replay
    (verifying every snapshot on the way) ends where the run ended."""
    log, _ = run(tmp_path, take_turns=True)
    replayed = tunecore.replay(tmp_path / "gone")
    assert replayed.state.done
    pauses = [command for _, command in replayed.commands if isinstance(command, PauseTrial)]
    assert len(pauses) == len([kind for kind, _ in log if kind == "start"]) - len(RATES)


def test_a_paused_exploit_saves_the_donors_state_under_the_donors_iteration(
    tmp_path: Path,
) -> None:
    """The memory save after an exploit holds the donor's restored state,
    so it carries the iteration of the donor's checkpoint, not the
    exploited trial's own last one (the resume counts on from there).
    Whether an exploit lands on a paused trial depends on the threads'
    timing (PBT clones only a donor's save at its own perturbation: about
    one run in twelve had none), so the run is repeated, up to five
    times, until one does; every exploit of every run is checked."""
    paused_exploits = 0
    for attempt in range(5):
        paused_exploits += _paused_exploits_checked(tmp_path / f"run{attempt}")
        if paused_exploits:
            break
    assert paused_exploits > 0, "no exploit paused in five runs: the test proves nothing"


def _paused_exploits_checked(tmp_path: Path) -> int:
    """Runs the experiment, checks the save after each paused exploit,
    and returns how many there were."""
    tmp_path.mkdir()
    run(tmp_path, take_turns=True)
    events = read_log(tmp_path / "gone").events
    replayed = tunecore.replay(tmp_path / "gone")
    exploits = {
        number: command for number, command in replayed.commands if isinstance(command, ResetTrial)
    }
    paused_exploits = 0
    for number, reset in exploits.items():
        after = [
            c
            for n, c in replayed.commands
            if n == number
            and isinstance(c, SaveCheckpoint)
            and c.storage is CheckpointStorage.MEMORY
        ]
        if not after:
            # An exploit that went on in place (with the storage save of the
            # checkpoint its result reported, when it carried one).
            continue
        paused_exploits += 1
        saved = next(
            event
            for event in events[number:]
            if isinstance(event, CheckpointSaved)
            and event.trial_id == reset.trial_id
            and event.checkpoint.storage is CheckpointStorage.MEMORY
        )
        donor = reset.restore_from
        assert donor is not None
        assert saved.checkpoint.training_iteration == donor.training_iteration
    return paused_exploits


def test_a_pause_on_a_result_with_a_checkpoint_saves_it_to_storage(tmp_path: Path) -> None:
    """`scoring` reports a checkpoint with every result, so every pause is
    on a result that has one: it is saved to storage (none is kept in
    memory only), except the donor's state an exploit saves before pausing,
    which is labelled with the donor's result."""
    run(tmp_path, take_turns=True)
    saves = [
        c for _, c in tunecore.replay(tmp_path / "gone").commands if isinstance(c, SaveCheckpoint)
    ]
    memory = [save for save in saves if save.storage is CheckpointStorage.MEMORY]
    assert all(save.result is not None for save in memory), memory
    assert len(saves) > len(memory)


def test_without_taking_turns_the_population_trains_in_waves(tmp_path: Path) -> None:
    log, _ = run(tmp_path, take_turns=False)
    starts = [trial_id for kind, trial_id in log if kind == "start"]
    assert len(starts) == len(RATES), log  # nobody paused
    first_complete = log.index(next(entry for entry in log if entry[0] == "complete"))
    assert len([1 for kind, _ in log[:first_complete] if kind == "start"]) == 2, log


@pytest.fixture(autouse=True)
def _needs_two_cpus_worth() -> None:
    if (os.cpu_count() or 1) < 2:
        pytest.skip("each trial asks for half the CPUs; one CPU cannot be halved into slots")
