"""Chained starts on real Ray (`core.experiment.chains`): a reused worker
runs the waiting trials chained behind its trial as each returns, and the
driver starts them with their results ready. Each trial runs once, whoever
takes it: its worker's chain, or the driver, which takes a chained trial
elsewhere when nothing else would fill a place; a chain the experiment
stops before leaves nothing behind.

The trials record every run of theirs in a directory of the test's
(`runs/<x>`, a line per run) and wait, where a test needs an order, for a
file another trial writes or for a result the driver has logged (polled,
with a deadline)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

import tunecore
from tunecore import FailureConfig, ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.core.results import is_end_marker
from tunecore.model import ResultReported
from tunecore.shell.eventlog import read_log
from tunecore.shell.executors.ray import RayExecutor

pytestmark = pytest.mark.usefixtures("ray_cluster")

DEADLINE_S = 60.0


def _wait_until(ready: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {DEADLINE_S:g} s for {what}")
        time.sleep(0.01)


def _logged_result_of(experiment: Path, x: int) -> bool:
    """Whether the driver has logged a result of the trial of this x (so
    it has also decided what to start in the same round)."""
    if not (experiment / "events.log").exists():
        return False
    return any(
        isinstance(event, ResultReported) and event.result.get("x") == x
        for event in read_log(experiment, quiet=True).events
    )


def recorded_run(config: dict[str, Any]) -> None:
    """Records this run; waits for the file `after[x]` and for a logged
    result of the trial `after_logged[x]`, if given; reports its x once;
    fails if listed in `fail`; marks itself done."""
    base = Path(config["base"])
    x = str(config["x"])
    with open(base / "runs" / x, "a") as runs:
        runs.write(f"{os.getpid()}\n")
    if x in config["after"]:
        path = base / config["after"][x]
        _wait_until(path.exists, str(path))
    if x in config["after_logged"]:
        other = config["after_logged"][x]
        experiment = Path(tunecore.get_context().get_trial_dir()).parent
        _wait_until(lambda: _logged_result_of(experiment, other), f"a result of trial {other}")
    tunecore.report({"x": config["x"]})
    if config["x"] in config["fail"]:
        raise ValueError(f"trial {x} fails")
    (base / "done" / x).touch()


def run(tmp_path: Path, count: int, **settings: Any) -> ResultGrid:
    for name in ("runs", "done"):
        (tmp_path / name).mkdir(parents=True, exist_ok=True)
    space: dict[str, object] = {
        "x": tunecore.grid_search(list(range(count))),
        "base": str(tmp_path),
        "after": settings.pop("after", {}),
        "after_logged": settings.pop("after_logged", {}),
        "fail": settings.pop("fail", []),
    }
    return Tuner(
        recorded_run,
        param_space=space,
        tune_config=TuneConfig(),
        run_config=RunConfig(
            name="exp",
            storage_path=str(tmp_path),
            verbose=0,
            failure_config=settings.pop("failure_config", FailureConfig()),
        ),
    ).fit()


def runs_of(tmp_path: Path) -> dict[int, int]:
    """How many times each trial's function ran, by its x."""
    return {
        int(path.name): len(path.read_text().splitlines()) for path in (tmp_path / "runs").iterdir()
    }


def results_by_x(tmp_path: Path) -> dict[int, int]:
    """How many results (not end markers) the log holds per trial's x."""
    counts: dict[int, int] = {}
    for event in read_log(tmp_path / "exp", quiet=True).events:
        if isinstance(event, ResultReported) and not is_end_marker(event.result):
            x = event.result["x"]
            assert isinstance(x, int)
            counts[x] = counts.get(x, 0) + 1
    return counts


@contextlib.contextmanager
def adoptions() -> Iterator[list[str]]:
    """The trials started with the results their worker ran ahead."""
    adopted: list[str] = []
    original = RayExecutor._adopt

    def counting(self: RayExecutor, trial_id: str, *args: Any) -> None:
        adopted.append(trial_id)
        original(self, trial_id, *args)

    with mock.patch.object(RayExecutor, "_adopt", counting):
        yield adopted


def test_short_trials_run_chained_and_each_runs_and_is_recorded_once(tmp_path: Path) -> None:
    with adoptions() as adopted:
        grid = run(tmp_path, 16)
    assert len(adopted) >= 4  # trials started with their results ready
    assert not grid.errors
    assert sorted(str(result.metrics["x"]) for result in grid) == sorted(map(str, range(16)))
    assert runs_of(tmp_path) == dict.fromkeys(range(16), 1)
    assert results_by_x(tmp_path) == dict.fromkeys(range(16), 1)
    for result in grid:
        assert result.path is not None
        assert (Path(result.path) / "params.json").is_file()
        assert len((Path(result.path) / "result.json").read_text().splitlines()) == 1


def test_a_chain_the_experiment_stops_before_leaves_no_trace(tmp_path: Path) -> None:
    """Trials 2 to 5 are chained behind 0. Trial 1 reports and fails
    (fail_fast) once 2 runs on 0's worker; 2 goes on once 1's result is
    logged, so after the experiment stopped: the driver never starts it,
    and what it made goes (the stop itself makes the directories of the
    waiting trials 3 to 5, which ends the chain)."""
    after_logged = {str(x): 1 for x in range(2, 6)}
    failures = FailureConfig(fail_fast=True)
    run(
        tmp_path,
        6,
        after={"1": "runs/2"},
        after_logged=after_logged,
        fail=[1],
        failure_config=failures,
    )
    runs = runs_of(tmp_path)
    assert runs[2] == 1  # run ahead, never started
    assert all(count == 1 for count in runs.values())
    assert 1 in results_by_x(tmp_path)
    assert set(results_by_x(tmp_path)) <= {0, 1}  # none of the chained trials'
    trial_dirs = [d for d in (tmp_path / "exp").iterdir() if d.name.startswith("recorded_run")]
    assert len(trial_dirs) == 2  # trials 0 and 1, which started
    assert all((d / "params.json").is_file() for d in trial_dirs)


def test_a_chained_trial_taken_elsewhere_runs_there_only(tmp_path: Path) -> None:
    """Three trials on two CPUs: 2 is chained behind 0. Trial 0 returns only
    once 2 has run: 1 ends first, nothing unchained waits, so the driver
    takes 2 from the chain and runs it on 1's worker; 0's worker then finds
    it taken and stops its chain."""
    grid = run(tmp_path, 3, after={"0": "done/2"})
    assert not grid.errors
    assert runs_of(tmp_path) == {0: 1, 1: 1, 2: 1}
    assert results_by_x(tmp_path) == {0: 1, 1: 1, 2: 1}


def test_a_chained_trial_its_worker_took_first_waits_for_that_worker(tmp_path: Path) -> None:
    """Trial 0 returns at once and its worker runs 2, which goes on only
    once 1's result is logged; 1 reports only once 2 runs. So when 1 ends,
    with 0 still running, the driver takes 2 from the chain, finds it taken
    by 0's worker, and waits for its results there."""
    grid = run(tmp_path, 3, after={"1": "runs/2"}, after_logged={"2": 1})
    assert not grid.errors
    assert runs_of(tmp_path) == {0: 1, 1: 1, 2: 1}
    assert results_by_x(tmp_path) == {0: 1, 1: 1, 2: 1}


def test_the_variable_turns_chains_off_and_a_bad_value_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUNECORE_CHAIN_STARTS", "0")
    with adoptions() as adopted:
        grid = run(tmp_path / "off", 8)
    assert not grid.errors
    assert adopted == []
    monkeypatch.setenv("TUNECORE_CHAIN_STARTS", "four")
    with pytest.raises(ValueError, match="TUNECORE_CHAIN_STARTS='four' is invalid"):
        run(tmp_path / "bad", 2)


def checkpointed_last(config: dict[str, Any]) -> None:
    """Ten results, the last with a checkpoint: a batch ends there, before
    the function returns, so a chain stops at such a trial, which keeps
    its worker."""
    for i in range(1, 11):
        if i < 10:
            tunecore.report({"i": i})
            continue
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "model.bin").write_bytes(b"x" * 64)
            tunecore.report({"i": i}, checkpoint=tunecore.Checkpoint.from_directory(directory))


def test_trials_a_chain_did_not_run_wait_behind_those_holding_workers(tmp_path: Path) -> None:
    """Both chains stop at a trial that keeps its worker; the trials after
    it, which no worker ran, start only after every trial holding a worker,
    so a new actor is only ever asked for while fewer than two are held
    (a third on two CPUs would wait, unplaced, until the placement patience
    ran out). How many actors the run makes is not the invariant: an actor
    slow to start (a loaded machine) outlasts the placement patience, and a
    freed actor is then ended instead of kept idle, so its successor's trial
    gets a new one, with one held (see `shell.executors.ray`)."""
    held_at_creation: list[int] = []
    original = RayExecutor._actor_for

    def counting(self: RayExecutor, trial_id: str, resources: Any) -> Any:
        held = {id(actor) for actor in [*self._actors.values(), *self._handed]}
        idle = {id(actor) for actors in self._idle.values() for actor in actors}
        actor = original(self, trial_id, resources)
        if id(actor) not in held | idle:
            held_at_creation.append(len(held))
        return actor

    with mock.patch.object(RayExecutor, "_actor_for", counting):
        grid = Tuner(
            checkpointed_last,
            param_space={"k": tunecore.grid_search(list(range(40)))},
            run_config=RunConfig(name="exp", storage_path=str(tmp_path), verbose=0),
        ).fit()
    assert not grid.errors
    assert all(result.checkpoint is not None for result in grid)
    assert held_at_creation[:2] == [0, 1]  # the first two trials' actors
    assert max(held_at_creation) < 2
