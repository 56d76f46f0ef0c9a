"""`tunecore.integrations.comet` with Comet's offline experiments: what each
trial's archive holds, and that a driver SIGKILLed twice and resumed
leaves one Comet experiment per trial holding every result exactly once
across its archives (`tracker_driver`)."""

from __future__ import annotations

import json
import sys
import zipfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import tunecore as tune

pytest.importorskip("comet_ml")

from tests.integrations import tracker_driver
from tests.integrations.mlflow_driver import ITERATIONS
from tunecore.integrations.comet import CometLoggerCallback, offline_archives
from tunecore.model import InvalidFieldError

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def messages(archive: Path) -> list[dict[str, Any]]:
    with zipfile.ZipFile(archive) as opened:
        return [json.loads(line) for line in opened.read("messages.json").splitlines()]


def experiment_meta(archive: Path) -> dict[str, Any]:
    with zipfile.ZipFile(archive) as opened:
        meta: dict[str, Any] = json.loads(opened.read("experiment.json"))
        return meta


def payloads(archive: Path, kind: str, field: str | None = None) -> list[dict[str, Any]]:
    """The payloads of `kind`'s messages (their `field`, where they nest)."""
    return [
        m["payload"] if field is None else m["payload"][field]
        for m in messages(archive)
        if m["type"] == kind
    ]


def metric_steps(archives: list[Path], name: str) -> list[int]:
    """Every step `name` was logged at, across an experiment's archives."""
    return sorted(
        metric["step"]
        for archive in archives
        for metric in payloads(archive, "metric_msg", "metric")
        if metric["metricName"] == name
    )


def by_key(offline: Path) -> dict[str, list[Path]]:
    """The archives in `offline`, per experiment key."""
    found: dict[str, list[Path]] = defaultdict(list)
    for archive in sorted(offline.glob("*.zip")):
        with zipfile.ZipFile(archive) as opened:
            if not opened.namelist():
                continue  # made as an experiment starts, filled as it ends
        found[experiment_meta(archive)["offline_id"]].append(archive)
    return found


def three_steps(config: dict[str, Any]) -> None:
    for step in range(1, 4):
        tune.report({"loss": config["x"] * step, "info": {"n": step}})
    if config["x"] == 2:
        raise RuntimeError("boom")


def test_each_trial_is_one_offline_experiment_with_its_config_and_results(
    tmp_path: Path,
) -> None:
    offline = tmp_path / "offline"
    callback = CometLoggerCallback(
        online=False, tags=["tag1"], project_name="tc", offline_directory=str(offline)
    )
    grid = tune.Tuner(
        three_steps,
        param_space={"x": tune.grid_search([1, 2]), "nested": {"lr": 0.1}},
        tune_config=tune.TuneConfig(metric="loss", mode="min", max_concurrent_trials=1),
        run_config=tune.RunConfig(
            storage_path=str(tmp_path),
            name="exp",
            executor="in_process",
            verbose=0,
            callbacks=[callback],
        ),
    ).fit()
    assert len(grid.errors) == 1
    experiments = by_key(offline)
    assert len(experiments) == 2
    names = set()
    for archives in experiments.values():
        assert len(archives) == 1
        (archive,) = archives
        meta = experiment_meta(archive)
        assert meta["project_name"] == "tc"
        assert meta["tags"] == ["tag1"]
        params = {
            p["paramName"]: p["paramValue"] for p in payloads(archive, "parameter_msg", "param")
        }
        assert params["x"] in (1, 2)
        assert params["nested|lr"] == 0.1  # Comet's name for a nested parameter
        others = {o["key"]: o["value"] for o in payloads(archive, "log_other")}
        assert others["Created from"] == "Ray"
        assert others["offline_experiment"] is True
        names.add(others.get("Name"))
        assert metric_steps([archive], "loss") == [1, 2, 3]
        assert metric_steps([archive], "info/n") == [1, 2, 3]
        assert metric_steps([archive], "training_iteration") == [1, 2, 3]
        for kept_out in ("done", "trial_id", "hostname", "config/x"):
            assert metric_steps([archive], kept_out) == []
        assert "trial_id" in others
    assert all(name and name.startswith("three_steps_") for name in names), names


@pytest.mark.parametrize("hold", ["all", "none"])
def test_a_driver_killed_twice_and_resumed_logs_each_result_once(tmp_path: Path, hold: str) -> None:
    """The first driver dies once the first trial's end is logged, with
    Comet (`all`: it archived that trial's experiment as the trial ended)
    or without it (`none`: the resumed driver, with Comet, catches the
    ended trial up as it restores it); the second dies amid the second
    trial, whose open experiment is never archived."""
    offline = tmp_path / "offline"

    def drive(phase: str) -> int:
        return tracker_driver.drive("comet", tmp_path, str(offline), phase, hold)

    assert drive("first") == -9
    assert len(by_key(offline)) == (1 if hold == "all" else 0)
    assert drive("second") == -9
    # The second trial's experiment was open: never archived.
    assert len(by_key(offline)) == 1
    assert drive("last") == 0

    experiments = by_key(offline)
    assert len(experiments) == len(tracker_driver.XS)
    every_step = list(range(1, ITERATIONS + 1))
    for key, archives in experiments.items():
        assert all(archive in offline_archives(key, str(offline)) for archive in archives)
        for name in ("loss", "training_iteration"):
            assert metric_steps(archives, name) == every_step, (name, key)
        x = next(
            p["paramValue"]
            for archive in archives
            for p in payloads(archive, "parameter_msg", "param")
            if p["paramName"] == "x"
        )
        losses = {
            m["step"]: m["metricValue"]
            for archive in archives
            for m in payloads(archive, "metric_msg", "metric")
            if m["metricName"] == "loss"
        }
        assert losses == {step: pytest.approx(x + 1.0 / step) for step in every_step}
        # The first archive makes the experiment, the others continue it.
        strategies = [experiment_meta(archive)["resume_strategy"] for archive in archives]
        assert sorted(strategies) == ["create"] + ["get"] * (len(archives) - 1)
    # Each trial's experiment archived once: the ended trial's was complete
    # (or caught up) before the last driver, which left it alone.
    assert sorted(len(archives) for archives in experiments.values()) == [1, 1, 1]


def test_bad_arguments_name_the_field() -> None:
    with pytest.raises(InvalidFieldError, match=r"^CometLoggerCallback.tags='a'"):
        CometLoggerCallback(tags="a")
    with pytest.raises(InvalidFieldError, match=r"^CometLoggerCallback.experiment_key='k'"):
        CometLoggerCallback(experiment_key="k")


def test_without_comet_ml_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "comet_ml", None)
    import tunecore.integrations  # noqa: PLC0415

    monkeypatch.delitem(sys.modules, "tunecore.integrations.comet")
    monkeypatch.delattr(tunecore.integrations, "comet")
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[comet\]'"):
        import tunecore.integrations.comet  # noqa: PLC0415


def test_ray_tune_logger_comet_is_the_same_callback() -> None:
    from tunecore.logger.comet import CometLoggerCallback as FromLogger  # noqa: PLC0415

    assert FromLogger is CometLoggerCallback
