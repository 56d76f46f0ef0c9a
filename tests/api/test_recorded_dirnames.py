"""Each trial's directory name is in the event log (`TrialStarted.dirname`,
`TrialState.dirname`) when a `trial_dirname_creator` named it: two trials
given one name get two directories, and a resume goes on in the
directories the log names, whatever the creator or the naming rules say
then. Logs from before keep their directories (`_named_by_creator`)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Literal

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.api.loader import load_experiment
from tunecore.core import lifecycle
from tunecore.model import TrialSpec, TrialStarted, TrialState, TrialStatus
from tunecore.model.outcome import Applied
from tunecore.shell.storage.layout import ExperimentStorage, is_experiment_entry, safe_name
from tunecore.shell.trial_files import RESULT_FILE


def fails_once(config: dict[str, object]) -> None:
    """Reports once, then fails the first time each trial runs."""
    tunecore.report({"loss": float(config["i"])})  # type: ignore[arg-type]
    marker = Path(str(config["markers"])) / str(config["i"])
    if not marker.exists():
        marker.touch()
        raise RuntimeError("first run fails")
    tunecore.report({"loss": 0.0})


def _trial_ids(directory: Path) -> set[str]:
    lines = (directory / RESULT_FILE).read_text().splitlines()
    return {json.loads(line)["trial_id"] for line in lines}


@pytest.mark.parametrize("executor", ["in_process", pytest.param("ray", marks=pytest.mark.slow)])
def test_one_name_for_two_trials_gives_two_directories_and_a_resume_keeps_them(
    tmp_path: Path, executor: Literal["ray", "in_process"], request: pytest.FixtureRequest
) -> None:
    if executor == "ray":
        request.getfixturevalue("ray_cluster")
    markers = tmp_path / "markers"
    markers.mkdir()
    space = {"i": tunecore.grid_search([1, 2, 3]), "markers": str(markers)}
    results = Tuner(
        fails_once,
        param_space=space,
        tune_config=TuneConfig(trial_dirname_creator=lambda trial: "same"),
        run_config=RunConfig(storage_path=str(tmp_path), name="exp", verbose=0, executor=executor),
    ).fit()
    assert all(result.error is not None for result in results)
    state = load_experiment(tmp_path / "exp").state
    recorded = {trial_id: trial.dirname for trial_id, trial in state.trials.items()}
    (first,) = [trial_id for trial_id, name in recorded.items() if name == "same"]
    others = set(recorded) - {first}
    assert len(others) == 2
    assert {recorded[trial_id] for trial_id in others} == {f"same_{t}" for t in others}
    for trial_id, name in recorded.items():
        assert name is not None
        assert _trial_ids(tmp_path / "exp" / name) == {trial_id}

    # A resume asks another creator (or the rules changed): the log's names hold.
    resumed = Tuner.restore(
        tmp_path / "exp",
        trainable=fails_once,
        restart_errored=True,
        trial_dirname_creator=lambda trial: "elsewhere",
    ).fit()
    assert all(result.error is None for result in resumed)
    assert {Path(result.path).name for result in resumed} == set(recorded.values())
    assert not (tmp_path / "exp" / "elsewhere").exists()
    again = load_experiment(tmp_path / "exp").state
    assert {t: trial.dirname for t, trial in again.trials.items()} == recorded
    for trial_id, name in recorded.items():
        assert name is not None
        assert _trial_ids(tmp_path / "exp" / name) == {trial_id}


def _spec(trial_id: str) -> TrialSpec:
    return TrialSpec(trial_id=trial_id, trainable_name="train")


def _write_results(directory: Path, *trial_ids: str) -> None:
    directory.mkdir(parents=True)
    rows = [json.dumps({"trial_id": t, "training_iteration": 1}) for t in trial_ids]
    (directory / RESULT_FILE).write_text("".join(row + "\n" for row in rows))


def test_a_trial_of_an_older_log_keeps_the_directory_the_older_rule_named(
    tmp_path: Path,
) -> None:
    """tunecore before the id was added to changed names put `a/b` in `a_b`:
    a resume of that log (no name recorded) found no `a_b_<id>` and left
    the trial's results and checkpoints behind."""
    storage = ExperimentStorage(tmp_path, "exp")
    _write_results(storage.path / "a_b", "t_00001")
    old = TrialState(spec=_spec("t_00001"), status=TrialStatus.TERMINATED)
    new = TrialState(spec=_spec("t_00002"))
    assert storage.trial_dirname_of(old, lambda trial: "a/b") == "a_b"
    # Another trial's creator name turned into "a_b" is not given its directory.
    assert storage.trial_dirname_of(new, lambda trial: "a/b") == "a_b_t_00002"


def test_two_trials_of_an_older_log_that_shared_a_directory_keep_sharing_it(
    tmp_path: Path,
) -> None:
    storage = ExperimentStorage(tmp_path, "exp")
    _write_results(storage.path / "same", "t_00001", "t_00002")
    ended = TrialStatus.TERMINATED
    trials = [TrialState(spec=_spec(t), status=ended) for t in ("t_00001", "t_00002")]
    names = [storage.trial_dirname_of(trial, lambda trial: "same") for trial in trials]
    assert names == ["same", "same"]
    fresh = TrialState(spec=_spec("t_00003"))
    assert storage.trial_dirname_of(fresh, lambda trial: "same") == "same_t_00003"


def test_a_recorded_name_is_taken_by_its_trial_alone(tmp_path: Path) -> None:
    storage = ExperimentStorage(tmp_path, "exp")
    recorded = TrialState(spec=_spec("t_00002"), dirname="run")
    storage.know_recorded([recorded])
    first = TrialState(spec=_spec("t_00001"))
    assert storage.trial_dirname_of(first, lambda trial: "run") == "run_t_00001"
    assert storage.trial_dirname_of(recorded, lambda trial: "other") == "run"


def test_a_recorded_name_is_made_safe_again(tmp_path: Path) -> None:
    """A log is data: a name written into it by hand never reaches a path
    as it is."""
    storage = ExperimentStorage(tmp_path, "exp")
    for planted in ("../../etc", "inbox", "a/b", ""):
        trial = TrialState(spec=_spec("t_00001"), dirname=planted)
        name = storage.trial_dirname_of(trial, None)
        assert "/" not in name
        assert ".." not in name
        assert name not in ("inbox", "")
        assert (storage.path / name).resolve().parent == storage.path


def test_a_recorded_name_is_kept_for_good() -> None:
    spec = _spec("t_00001")
    running = TrialState(spec=spec, status=TrialStatus.RUNNING)
    named = lifecycle.apply(running, TrialStarted(trial_id="t_00001", at=1.0, dirname="a"))
    assert isinstance(named, Applied)
    assert named.state.dirname == "a"
    again = lifecycle.apply(named.state, TrialStarted(trial_id="t_00001", at=2.0, dirname="b"))
    assert isinstance(again, Applied)
    assert again.state.dirname == "a"
    unnamed = lifecycle.apply(named.state, TrialStarted(trial_id="t_00001", at=3.0))
    assert isinstance(unnamed, Applied)
    assert unnamed.state.dirname == "a"


def test_the_name_is_left_out_of_a_record_that_has_none() -> None:
    """A log of this version without names reads as an older one does."""
    event = TrialStarted(trial_id="t_00001", at=1.0)
    assert b"dirname" not in msgspec.msgpack.encode(event)
    assert msgspec.msgpack.encode(TrialState(spec=_spec("t"))).count(b"dirname") == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=120), min_size=1, max_size=8))
@example(["same", "same", "same_t_00001"])
@example(["x", "x_t_00002", "x"])  # the suffixed name taken too: `_2`
@example(["inbox", "_inbox", "a/b", "a_b", "a_b_t_00002"])
def test_a_creator_never_gives_two_trials_one_directory(names: list[str]) -> None:
    """Whatever names a creator returns (repeated, unsafe, one another's
    suffixed form), each trial gets a directory of its own, safe and
    inside the experiment, and asking again gives the same one."""
    with tempfile.TemporaryDirectory() as root:
        storage = ExperimentStorage(root, "exp")
        trials = [TrialState(spec=_spec(f"t_{n:05d}")) for n in range(len(names))]
        given_names = dict(zip((t.trial_id for t in trials), names, strict=True))

        def creator(trial: TrialState) -> str:
            return given_names[trial.trial_id]

        dirs = [storage.trial_dirname_of(trial, creator) for trial in trials]
        assert len(set(dirs)) == len(dirs)
        for name in dirs:
            assert safe_name(name) == name
            assert not is_experiment_entry(name)
        assert [storage.trial_dirname_of(trial, creator) for trial in trials] == dirs
