"""A scheduler subclass written against Ray Tune's imperative API is
refused where it is passed, naming the class and the hook, instead of
failing mid-run on arguments in the wrong places."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

import tunecore
from tunecore import TuneConfig
from tunecore.model import Mode
from tunecore.schedulers import ASHAScheduler, FIFOScheduler


class StopAtTwo(FIFOScheduler):  # type: ignore[misc]  # Ray's style, on purpose
    """As Ray's docs write a custom scheduler."""

    def on_trial_result(self, tune_controller: Any, trial: Any, result: Any) -> Any:  # type: ignore[override]
        return "STOP" if result["training_iteration"] >= 2 else "CONTINUE"


class OldRunner(FIFOScheduler):  # type: ignore[misc]
    def on_trial_add(self, trial_runner: Any, trial: Any) -> None:  # type: ignore[override]
        pass


@pytest.mark.parametrize(
    ("scheduler", "hook"), [(StopAtTwo(), "on_trial_result"), (OldRunner(), "on_trial_add")]
)
def test_a_ray_style_scheduler_is_refused_naming_its_class_and_hook(
    scheduler: object, hook: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        TuneConfig(scheduler=scheduler)
    text = str(raised.value)
    assert "scheduler" in text
    assert f"{type(scheduler).__qualname__}.{hook}(self, tune_controller" in text
    assert "Stopper" in text


def test_tune_run_refuses_it_too(tmp_path: Any) -> None:
    with pytest.raises(ValidationError, match=r"StopAtTwo\.on_trial_result"):
        tunecore.run(lambda config: None, scheduler=StopAtTwo(), storage_path=str(tmp_path))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "scheduler", [FIFOScheduler(), ASHAScheduler(metric="loss", mode=Mode.MIN), None]
)
def test_built_in_schedulers_pass(scheduler: object) -> None:
    assert TuneConfig(scheduler=scheduler).scheduler is scheduler
