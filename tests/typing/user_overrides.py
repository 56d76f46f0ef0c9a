"""A user's code as Ray Tune's docs write it, under `mypy --strict` (and
pyright): a policy's `mode` given as the string `"min"`, callbacks whose
hooks override tunecore's with Ray's documented signatures (`List[Trial]`,
`Dict`, `**info`), and a logger overriding `log_trial_result`. Nothing
here runs (see `public_api.py`); `tests/shell/test_callback_trials.py`
runs such a callback, the schedulers' tests the string modes."""

# Ray's docs write `List` and `Dict` from `typing`; so do the users this checks.
# ruff: noqa: UP006, UP035
from __future__ import annotations

from typing import Any, Dict, List, assert_type

from tunecore import Callback, RunConfig, TuneConfig
from tunecore.api.plot import Drawing, collect
from tunecore.experiment import Trial
from tunecore.logger import LoggerCallback
from tunecore.model import Mode
from tunecore.schedulers import (
    ASHAScheduler,
    AsyncHyperBandScheduler,
    HyperBandForBOHB,
    HyperBandScheduler,
    MedianStoppingRule,
    PopulationBasedTraining,
)
from tunecore.stopper import ExperimentPlateauStopper, TrialPlateauStopper
from tunecore.testing import PolicyDriver
from tunecore.testing.check import check_policy


def schedulers_given_mode_as_a_string() -> TuneConfig:
    asha = ASHAScheduler(metric="loss", mode="min", max_t=9)
    assert_type(asha, ASHAScheduler)
    PolicyDriver(ASHAScheduler(metric="loss", mode="min", max_t=9), cpus=2)
    check_policy(lambda: ASHAScheduler(metric="loss", mode="min", max_t=9))
    AsyncHyperBandScheduler(metric="loss", mode="max")
    HyperBandScheduler(metric="loss", mode="max", max_t=9)
    HyperBandForBOHB(metric="loss", mode="max", max_t=9)
    MedianStoppingRule(metric="loss", mode="min")
    PopulationBasedTraining(metric="loss", mode="max", hyperparam_mutations={"lr": [0.1, 0.2]})
    ASHAScheduler(metric="loss", mode=Mode.MIN)
    return TuneConfig(scheduler=asha)


def curves_ranked_by_a_string_mode(path: str) -> Drawing:
    return collect(path, metric="loss", mode="min")


def stoppers_given_mode_as_a_string() -> RunConfig:
    TrialPlateauStopper(metric="loss", mode="min")
    return RunConfig(stop=ExperimentPlateauStopper(metric="loss", mode="max", patience=2))


class RayStyleCallback(Callback):
    """Ray's `tune/api/callbacks.rst` signatures, `**info` and all."""

    def setup(
        self,
        stop: Any = None,
        num_samples: int | None = None,
        total_num_samples: int | None = None,
        **info: Any,
    ) -> None:
        self.seen: list[str] = []

    def on_step_begin(self, iteration: int, trials: List[Trial], **info: Any) -> None:
        self.seen.append(f"step {iteration} of {len(trials)}")

    def on_step_end(self, iteration: int, trials: List[Trial], **info: Any) -> None:
        self.seen.append(f"end {iteration}")

    def on_trial_start(
        self, iteration: int, trials: List[Trial], trial: Trial, **info: Any
    ) -> None:
        self.seen.append(f"start {trial.trial_id}")

    def on_trial_restore(
        self, iteration: int, trials: List[Trial], trial: Trial, **info: Any
    ) -> None:
        self.seen.append(f"restore {trial}")

    def on_trial_save(self, iteration: int, trials: List[Trial], trial: Trial, **info: Any) -> None:
        self.seen.append(f"save {trial}")

    def on_trial_result(
        self,
        iteration: int,
        trials: List[Trial],
        trial: Trial,
        result: Dict[str, Any],
        **info: Any,
    ) -> None:
        self.seen.append(f"result {result['loss']}")

    def on_trial_complete(
        self, iteration: int, trials: List[Trial], trial: Trial, **info: Any
    ) -> None:
        self.seen.append(f"complete {trial.status}")

    def on_trial_error(
        self, iteration: int, trials: List[Trial], trial: Trial, **info: Any
    ) -> None:
        self.seen.append(f"error {trial}")

    def on_trial_recover(
        self, iteration: int, trials: List[Trial], trial: Trial, **info: Any
    ) -> None:
        self.seen.append(f"recover {trial}")

    def on_experiment_end(self, trials: List[Trial], **info: Any) -> None:
        self.seen.append(f"end of {len(trials)}")


class PlainDictCallback(Callback):
    """The shorter forms users write: a bare `dict`, `list` of trials."""

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: dict[str, Any]
    ) -> None:
        print(result.get("loss"))

    def on_experiment_end(self, trials: list[Trial]) -> None:
        print(len(trials))


class RayStyleLogger(LoggerCallback):
    """Ray's `LoggerCallback` overrides (`tune/api/logging.rst`)."""

    def log_trial_start(self, trial: Trial) -> None:
        print(trial.trial_id)

    def log_trial_result(self, iteration: int, trial: Trial, result: Dict[str, Any]) -> None:
        print(iteration, result["loss"])

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        print(trial, failed)


def callbacks_in_a_run_config() -> RunConfig:
    return RunConfig(callbacks=[RayStyleCallback(), PlainDictCallback(), RayStyleLogger()])
