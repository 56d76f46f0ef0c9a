"""`ResourceChangingScheduler` as Ray Tune users write it, run with the
in-process executor (tests/integration has it on Ray): a trial grows and
sees it, the user's allocation function gets Ray's arguments, its answers
are logged so replay needs no code, and a restore takes the function again."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

import tunecore as tune
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.execution.placement_groups import PlacementGroupFactory
from tunecore.model import ResultReported
from tunecore.schedulers import ResourceChangingScheduler
from tunecore.schedulers.resource_changing_scheduler import DistributeResources
from tunecore.shell.eventlog import read_log

STEPS = 4


def train(config: dict[str, Any]) -> None:
    """Checkpoints every step (as Ray asks of a resized trainable) and
    reports the CPUs it holds on this run."""
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        start = int(Path(checkpoint.path, "step").read_text())
    for step in range(start, STEPS):
        if config.get("fail_at") == step and not Path(config["marker"]).exists():
            Path(config["marker"]).write_text("failed once")
            raise RuntimeError("failing once, to be resumed")
        cpus = tune.get_context().get_trial_resources().head_cpus
        saved = tempfile.mkdtemp()
        Path(saved, "step").write_text(str(step + 1))
        tune.report(
            {"loss": 1.0 / (step + 1), "cpus": cpus},
            checkpoint=tune.Checkpoint.from_directory(saved),
        )


class Calls:
    """A user allocation function giving the trial every CPU of the
    cluster, recording what Ray's arguments showed it."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def __call__(
        self, tune_controller: Any, trial: Any, result: dict[str, Any], scheduler: Any
    ) -> Any:
        total = tune_controller._resource_updater.get_num_cpus()
        self.seen.append(
            {
                "iteration": result["training_iteration"],
                "previous": trial.last_result.get("training_iteration"),
                "live": len(tune_controller.get_live_trials()),
                "base": scheduler._base_trial_resources,
                "holds": trial.placement_group_factory,
                "total": total,
            }
        )
        return PlacementGroupFactory([{"CPU": total}])


def tuner(
    tmp_path: Path, allocation: Any, space: dict[str, Any] | None = None, **run: Any
) -> Tuner:
    scheduler = ResourceChangingScheduler(resources_allocation_function=allocation)
    return Tuner(
        tune.with_resources(train, {"cpu": 1}),
        param_space=space,
        tune_config=TuneConfig(metric="loss", mode="min", scheduler=scheduler),
        run_config=RunConfig(
            name="exp", storage_path=str(tmp_path), executor="in_process", verbose=0, **run
        ),
    )


def cpus_reported(result: tune.Result) -> list[float]:
    frame = result.metrics_dataframe
    assert frame is not None
    return [float(value) for value in frame["cpus"]]


def test_a_trial_grows_and_sees_it_through_get_trial_resources(tmp_path: Path) -> None:
    calls = Calls()
    result = tuner(tmp_path, calls).fit()[0]
    total = calls.seen[0]["total"]
    assert cpus_reported(result) == [1.0] + [total] * (STEPS - 1)
    first = calls.seen[0]
    assert first["iteration"] == 1
    assert first["previous"] is None  # Ray's trial still holds the result before
    assert first["live"] == 1
    assert first["base"] == PlacementGroupFactory([{"CPU": 1}])
    assert first["holds"] == PlacementGroupFactory([{"CPU": 1}])
    assert calls.seen[1]["holds"] == PlacementGroupFactory([{"CPU": total}])
    assert [call["iteration"] for call in calls.seen] == list(range(1, STEPS + 1))


def test_callbacks_see_the_new_resources(tmp_path: Path) -> None:
    seen: list[tuple[int, dict[str, float]]] = []

    class Watch(tune.Callback):
        def on_trial_result(
            self, iteration: int, trials: Any, trial: Any, result: Any, **info: Any
        ) -> None:
            seen.append(
                (result["training_iteration"], trial.placement_group_factory.required_resources)
            )

    calls = Calls()
    tuner(tmp_path, calls, callbacks=[Watch()]).fit()
    total = calls.seen[0]["total"]
    assert seen[0] == (1, {"CPU": 1.0})
    assert seen[1] == (2, {"CPU": total})


def test_the_answers_are_logged_and_replay_needs_no_function(tmp_path: Path) -> None:
    calls = Calls()
    tuner(tmp_path, calls).fit()
    total = calls.seen[0]["total"]
    events = read_log(tmp_path / "exp").events
    answers = [e.allocation for e in events if isinstance(e, ResultReported) and e.allocation]
    assert [a.cpu for a in answers] == [total] * STEPS
    replayed = tune.replay(tmp_path / "exp", quiet=True).state
    assert [t.spec.resources.cpu for t in replayed.trials.values()] == [total]


def test_a_restore_takes_the_function_again(tmp_path: Path) -> None:
    calls = Calls()
    space = {"fail_at": 2, "marker": str(tmp_path / "marker")}
    first = tuner(tmp_path, calls, space).fit()[0]
    assert first.error is not None  # failed at its third step, grown already
    path = tmp_path / "exp"
    restored = Tuner.restore(str(path), tune.with_resources(train, {"cpu": 1}), resume_errored=True)
    with pytest.raises(ValueError, match="resources_allocation_function"):
        restored.fit()
    again = Calls()
    restored = Tuner.restore(
        str(path),
        tune.with_resources(train, {"cpu": 1}),
        resume_errored=True,
        resources_allocation_function=again,
    )
    result = restored.fit()[0]
    total = calls.seen[0]["total"]
    assert result.metrics["training_iteration"] == STEPS
    assert [call["iteration"] for call in again.seen] == [3, 4]
    assert again.seen[0]["holds"] == PlacementGroupFactory([{"CPU": total}])  # from the log
    assert cpus_reported(result)[-1] == total


class Booster(tune.Trainable):
    """The class API: `self.trial_resources`, as Ray's example reads it."""

    def setup(self, config: dict[str, Any]) -> None:
        self.steps = 0

    def step(self) -> dict[str, Any]:
        self.steps += 1
        resources = self.trial_resources
        assert resources is not None  # None only outside a trial, as in Ray
        return {"loss": 1.0 / self.steps, "cpus": resources.head_cpus}

    def save_checkpoint(self, checkpoint_dir: str) -> dict[str, Any]:
        return {"steps": self.steps}

    def load_checkpoint(self, checkpoint: Any) -> None:
        self.steps = checkpoint["steps"]


def test_the_class_api_sees_its_resources_and_the_default_allocation(tmp_path: Path) -> None:
    scheduler = ResourceChangingScheduler(resources_allocation_function=DistributeResources())
    result = Tuner(
        tune.with_resources(Booster, {"cpu": 1}),
        tune_config=TuneConfig(metric="loss", mode="min", scheduler=scheduler),
        run_config=RunConfig(
            name="exp",
            storage_path=str(tmp_path),
            executor="in_process",
            verbose=0,
            stop={"training_iteration": 3},
        ),
    ).fit()[0]
    total = tune.replay(tmp_path / "exp", quiet=True).state.total
    assert total is not None
    assert result.error is None
    assert cpus_reported(result) == [1.0, total.cpu, total.cpu]  # one trial: it takes all


def test_create_scheduler_builds_it_by_ray_tunes_name() -> None:
    scheduler = tune.create_scheduler("resource_changing", metric="loss", mode="min")
    assert scheduler == ResourceChangingScheduler()  # FIFO resized by DistributeResources()
