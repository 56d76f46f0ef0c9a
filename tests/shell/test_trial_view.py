"""The Trial view's cost: one view per trial state, the name creator asked
once per trial (the loop builds views for every callback call)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from tunecore.model import JsonDict, TrialSpec, TrialState, TrialStatus
from tunecore.model.checkpoint import CheckpointHistory, CheckpointRef, CheckpointStorage
from tunecore.shell.trial_view import Trial, TrialViews


def state(**fields: object) -> TrialState:
    spec = TrialSpec(trial_id="0a1b2_00001", trainable_name="pkg.mod:train", config={"x": 1})
    return msgspec.structs.replace(TrialState(spec=spec), **fields)


def test_a_view_is_reused_while_the_state_is_the_same_object() -> None:
    asked: list[str] = []

    def name(trial: Trial) -> str:
        asked.append(str(trial))
        return "custom"

    views = TrialViews(name)
    first = state()
    assert views.of(first) is views.of(first)
    running = msgspec.structs.replace(first, status=TrialStatus.RUNNING)
    newer = views.of(running)
    assert newer is not views.of(first)
    assert newer == views.of(first)  # the same trial
    assert len({newer, views.of(first)}) == 1
    assert (newer.status, str(newer), newer.custom_trial_name) == ("RUNNING", "custom", "custom")
    assert asked == ["train_0a1b2_00001"]  # once, with Ray's default name


def test_without_a_creator_the_name_is_rays_default() -> None:
    view = TrialViews().of(state(recorded_result={"loss": 0.5}))
    assert str(view) == repr(view) == "train_0a1b2_00001"
    assert view.trainable_name == "train"
    assert view.custom_trial_name is None
    assert view.last_result == {"loss": 0.5}
    assert view.local_path is None  # no directory known
    assert view.status == Trial.PENDING


def test_a_finished_trials_view_is_not_kept_but_equals_the_last() -> None:
    views = TrialViews()
    running = views.of(state(status=TrialStatus.RUNNING))
    ended = state(status=TrialStatus.TERMINATED)
    assert views.of(ended) == running  # the same trial, by id
    assert views.of(ended) is not views.of(ended)  # made each time: a finished trial costs none
    assert views.of(ended).state is ended


def test_a_flat_config_is_its_own_evaluated_params_and_nothing_else_is() -> None:
    x = 0.5
    config: JsonDict = {"x": x}
    shared = TrialSpec(trial_id="t", trainable_name="f", config=config, evaluated_params={"x": x})
    assert shared.evaluated_params is shared.config
    others: list[JsonDict] = [{"x": 0.5000001}, {"x": 1}, {"y": x}, {"x": x, "y": 1}, {}]
    for evaluated in others:
        spec = TrialSpec(
            trial_id="t", trainable_name="f", config=config, evaluated_params=evaluated
        )
        assert spec.evaluated_params is evaluated
    assert msgspec.msgpack.encode(shared) == msgspec.msgpack.encode(
        TrialSpec(trial_id="t", trainable_name="f", config=config, evaluated_params={"x": 0.5})
    )


def test_rays_trial_attributes_for_callbacks_read_the_trial_and_its_directory(
    tmp_path: Path,
) -> None:
    # What Ray's `Trial` gives a callback: the newest kept checkpoint, the
    # experiment directory's name and path, the error file once the trial
    # failed, the node's address.
    experiment = tmp_path / "my_experiment"
    trial_dir = experiment / "train_0a1b2_00001"
    (trial_dir / "checkpoint_000002").mkdir(parents=True)
    kept = CheckpointHistory(
        persistent=(
            CheckpointRef(storage=CheckpointStorage.PERSISTENT, path="gone/checkpoint_000001"),
            CheckpointRef(
                storage=CheckpointStorage.PERSISTENT,
                path="train_0a1b2_00001/checkpoint_000002",
                training_iteration=2,
            ),
        )
    )
    view = Trial(
        state(checkpoints=kept, recorded_result={"node_ip": "10.0.0.7"}),
        dir_of=lambda _: trial_dir,
    )
    assert view.checkpoint is not None
    assert view.checkpoint.path == str(trial_dir / "checkpoint_000002")
    assert view.has_checkpoint()
    assert view.experiment_dir_name == "my_experiment"
    assert view.local_experiment_path == view.remote_experiment_path == str(experiment)
    assert view.node_ip == "10.0.0.7"
    assert view.error_file is None
    (trial_dir / "error.txt").write_text("Failure # 1\nValueError: bad\n")
    failed = Trial(view.state, dir_of=lambda _: trial_dir)
    assert failed.error_file == (trial_dir / "error.txt").as_posix()

    fresh = Trial(state(), dir_of=lambda _: trial_dir)
    assert fresh.checkpoint is None
    assert not fresh.has_checkpoint()
    assert fresh.node_ip is None
    assert Trial(state()).experiment_dir_name is None  # no directory known yet


# -- Ray's metric_analysis ----------------------------------------------------------------------

LOSSES = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0]


def reports_losses(config: JsonDict) -> None:
    import tunecore  # noqa: PLC0415 - the trainable's own import

    for loss in LOSSES:
        tunecore.report({"loss": loss, "nested": {"acc": -loss}, "phase": "train"})


def test_metric_analysis_has_rays_keys_and_values(tmp_path: Path) -> None:
    import tunecore  # noqa: PLC0415

    seen: list[dict[str, dict[str, float]]] = []

    class Keeps(tunecore.Callback):
        def on_trial_complete(self, iteration: int, trials: object, trial: Trial) -> None:
            seen.append(trial.metric_analysis)

    results = tunecore.Tuner(
        reports_losses,
        run_config=tunecore.RunConfig(
            storage_path=str(tmp_path), name="ma", executor="in_process", callbacks=[Keeps()]
        ),
    ).fit()
    (trial,) = results.trials
    analysis = trial.metric_analysis
    # Ray's `_TrainingRunMetadata.update_metric`, over the same values.
    assert analysis["loss"] == {
        "max": 9.0,
        "min": 1.0,
        "avg": sum(LOSSES) / len(LOSSES),
        "last": 5.0,
        "last-5-avg": sum(LOSSES[-5:]) / 5,
        "last-10-avg": sum(LOSSES[-10:]) / 10,
    }
    assert analysis["nested/acc"]["max"] == -1.0
    assert analysis["nested/acc"]["last-5-avg"] == -sum(LOSSES[-5:]) / 5
    assert "phase" not in analysis  # not a number
    assert seen[0]["loss"]["max"] == 9.0
    assert seen[0]["loss"]["min"] == 1.0


def test_a_trial_without_results_has_no_analysis() -> None:
    assert TrialViews().of(state()).metric_analysis == {}
