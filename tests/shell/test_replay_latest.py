"""`shell.replay.latest`: the state a reader wants now (what `tunecore
status` prints), the same as a full replay's, stepping only the events after
the newest snapshot (issue 41: status on a 100,000-trial experiment)."""

from __future__ import annotations

import gc
import io
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import tunecore
import tunecore.api.loader as loader_module
import tunecore.shell.replay as replay_module
from tunecore import RunConfig, TuneConfig
from tunecore.cli import main
from tunecore.core.experiment.snapshot import BUILTIN, encode_state
from tunecore.model import JsonDict, Resources
from tunecore.schedulers import ASHAScheduler
from tunecore.shell.eventlog import LogError, read_log
from tunecore.shell.journal import Journal, SnapshotStore
from tunecore.shell.replay import latest, rebuild, replay

TRIALS = 40


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    a = config["a"]
    assert isinstance(a, float)
    return {"loss": a + 1.0 / iteration}, 1.0 + a


@pytest.fixture
def experiment(tmp_path: Path) -> Path:
    return simulated(tmp_path)


def simulated(tmp_path: Path) -> Path:
    """A finished ASHA experiment of `TRIALS` trials, simulated."""
    results = tunecore.simulate(
        curve,
        param_space={"a": tunecore.uniform(0.0, 1.0)},
        tune_config=TuneConfig(
            metric="loss",
            mode="min",
            num_samples=TRIALS,
            seed=0,
            scheduler=ASHAScheduler(max_t=16, grace_period=1, reduction_factor=4),
        ),
        run_config=RunConfig(name="exp", storage_path=str(tmp_path), verbose=0),
        cluster=Resources(cpu=4),
        max_iterations=16,
    )
    return Path(results.experiment_path)


def counting_steps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the events `shell.replay` steps through the core."""
    calls = [0]
    real: Callable[..., Any] = getattr(replay_module, "step")  # noqa: B009 - not re-exported

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(replay_module, "step", counted)
    return calls


def test_latest_is_the_full_replays_state_and_count(experiment: Path) -> None:
    full = replay(experiment, keep_commands=False)
    now = latest(experiment)
    assert encode_state(now.state) == encode_state(full.state)
    assert now.records == full.records == len(read_log(experiment).events)


def test_latest_steps_only_the_events_after_the_newest_snapshot(
    experiment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = len(read_log(experiment).events)
    newest = SnapshotStore(experiment).available()[-1]
    assert newest == events  # the run's last snapshot covers the whole log
    calls = counting_steps(monkeypatch)
    latest(experiment)
    assert calls[0] == 0
    replay(experiment, verify=False, keep_commands=False)
    assert calls[0] == events


def test_latest_without_snapshots_steps_every_event(
    experiment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for records in SnapshotStore(experiment).available():
        SnapshotStore(experiment).path(records).unlink()
    events = len(read_log(experiment).events)
    calls = counting_steps(monkeypatch)
    state = latest(experiment).state
    assert calls[0] == events
    assert encode_state(state) == encode_state(replay(experiment).state)


def test_status_steps_no_event_a_snapshot_covers(
    experiment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = counting_steps(monkeypatch)
    with redirect_stdout(io.StringIO()) as out:
        assert main(["status", str(experiment)]) == 0
    assert calls[0] == 0
    events = len(read_log(experiment).events)
    assert f"{events} events; the experiment has finished." in out.getvalue()
    assert f"Number of trials: {TRIALS} ({TRIALS} TERMINATED)" in out.getvalue()


def recording_collector(monkeypatch: pytest.MonkeyPatch, module: object) -> list[bool]:
    """Record, at each `read_log` call of `module`, whether the cyclic
    collector is on."""
    seen: list[bool] = []
    real: Callable[..., Any] = getattr(module, "read_log")  # noqa: B009 - not re-exported

    def recorded(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "read_log", recorded)
    return seen


@pytest.mark.parametrize(
    ("read", "module"),
    [
        (tunecore.ResultGrid.from_path, loader_module),
        (latest, replay_module),
        (replay, replay_module),
    ],
    ids=["from_path", "latest", "replay"],
)
def test_reads_run_with_the_cyclic_collector_paused(
    experiment: Path,
    monkeypatch: pytest.MonkeyPatch,
    read: Callable[[Path], object],
    module: object,
) -> None:
    """A read builds an object per trial and result, none in a cycle; the
    collector's passes walk every live object, so with it on, reading N
    trials costs more than N times one (40% of from_path at 100,000
    trials). It is paused for the read, and on again after."""
    seen = recording_collector(monkeypatch, module)
    assert gc.isenabled()
    read(experiment)
    assert seen == [False]
    assert gc.isenabled()


def test_a_read_that_raises_turns_the_collector_back_on(tmp_path: Path) -> None:
    with pytest.raises(LogError):
        latest(tmp_path)
    assert gc.isenabled()


def test_from_path_finds_trial_directories_without_a_stat_per_trial(
    experiment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One listing of the experiment directory, not a `stat` per trial
    (0.35 s of `from_path` at 100,000 trials)."""
    calls = [0]
    real = Path.is_dir

    def counted(self: Path, *args: Any, **kwargs: Any) -> bool:
        calls[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "is_dir", counted)
    grid = tunecore.ResultGrid.from_path(experiment)
    assert calls[0] < TRIALS
    assert all(Path(result.path).is_dir() for result in grid)


def test_a_rebuild_shows_its_visitors_each_event_it_steps_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a resume needs of the events after its snapshot (the results
    its files' repair puts back) it takes as the rebuild steps them, not
    by stepping them again."""

    def early(self: Journal, state: Any, files: Any = None) -> None:
        if self.records <= 60:  # the newest snapshot but the run's last: early on
            self.snapshot(state, files)

    monkeypatch.setattr(Journal, "maybe_snapshot", early)
    directory = simulated(tmp_path)
    store = SnapshotStore(directory)
    store.path(store.available()[-1]).unlink()  # the run's last one: a kill leaves none
    contents = read_log(directory, lazy=True)
    newest = store.available()[-1]
    assert 0 < newest < len(contents.events)
    calls = counting_steps(monkeypatch)
    seen: list[tuple[Any, Any, Any]] = []
    rebuilt = rebuild(contents, directory, BUILTIN, lambda *visit: seen.append(visit))
    tail = list(contents.events[newest:])
    assert calls[0] == len(tail)
    assert rebuilt.rejected == 0
    assert [event for _, event, _ in seen] == tail
    assert seen[0][0] is rebuilt.snapshot_state
    assert seen[-1][2] is rebuilt.state
