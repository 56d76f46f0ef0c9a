"""Names from Ray Tune's API reference and examples that docs/ray-catalogue.md
lists as provided, each doing what Ray's does; and the names it lists as
deliberately left out, each failing with an error that says what to use."""

from __future__ import annotations

import importlib
import json
import re
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

import tunecore as tune
from tunecore import RunConfig, Tuner
from tunecore.utils import date_str, diagnose_serialization, wait_for_gpu
from tunecore.utils.log import Verbosity, has_verbosity, set_verbosity


def run_config(tmp_path: Path, **fields: object) -> RunConfig:
    return RunConfig(storage_path=str(tmp_path), executor="in_process", **fields)  # type: ignore[arg-type]


# -- ray.tune.utils.log ------------------------------------------------------------------------


def test_verbosity_is_accepted_where_a_verbosity_number_is() -> None:
    assert RunConfig(verbose=Verbosity.V0_MINIMAL).verbose == 0
    assert RunConfig(verbose=Verbosity.V2_TRIAL_NORM).verbose == 2
    assert int(Verbosity.V3_TRIAL_DETAILS) == 3


def test_has_verbosity_compares_with_the_level_set() -> None:
    try:
        set_verbosity(Verbosity.V1_EXPERIMENT)
        assert has_verbosity(Verbosity.V1_EXPERIMENT)
        assert not has_verbosity(2)
        with pytest.raises(ValueError, match="level=7"):
            set_verbosity(7)
    finally:
        set_verbosity(Verbosity.V3_TRIAL_DETAILS)


# -- ray.tune.utils.wait_for_gpu ---------------------------------------------------------------


@dataclass
class GPU:
    id: int
    uuid: str
    memoryUtil: float


def gputil_reading(readings: list[float]) -> ModuleType:
    """A GPUtil module whose one GPU reports `readings` in turn (the last
    one from then on): the memory of a GPU another trial is releasing."""
    module = ModuleType("GPUtil")
    remaining = list(readings)

    def get_gpus() -> list[GPU]:
        reading = remaining.pop(0) if len(remaining) > 1 else remaining[0]
        return [GPU(id=0, uuid="GPU-1234", memoryUtil=reading)]

    module.getGPUs = get_gpus  # type: ignore[attr-defined]
    return module


def test_wait_for_gpu_without_gputil_says_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "GPUtil", None)  # an import of it fails
    with pytest.raises(RuntimeError, match="pip install gputil"):
        wait_for_gpu(gpu_id=0)


def test_wait_for_gpu_returns_once_the_memory_is_freed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first reading checks the id; then two busy readings, then a free one.
    monkeypatch.setitem(sys.modules, "GPUtil", gputil_reading([0.9, 0.9, 0.5, 0.0]))
    assert wait_for_gpu(gpu_id="0", retry=4, delay_s=0) is True


def test_wait_for_gpu_takes_a_uuid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "GPUtil", gputil_reading([0.0]))
    assert wait_for_gpu(gpu_id="GPU-1234", delay_s=0) is True


def test_wait_for_gpu_gives_up_after_its_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "GPUtil", gputil_reading([0.9]))
    with pytest.raises(RuntimeError, match=r"not freed to 0\.01 in 3 checks"):
        wait_for_gpu(gpu_id=0, retry=3, delay_s=0)


def test_wait_for_gpu_refuses_an_unknown_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "GPUtil", gputil_reading([0.0]))
    with pytest.raises(ValueError, match="gpu_id=3 is not one of the GPUs found"):
        wait_for_gpu(gpu_id=3)
    with pytest.raises(ValueError, match=r"gpu_id=1\.5 \(float\)"):
        wait_for_gpu(gpu_id=1.5)  # type: ignore[arg-type]


# -- ray.tune.utils.diagnose_serialization / date_str ------------------------------------------

SCRIPT = """
import threading
from tunecore import report

LOCK = threading.Lock()
RATE = 0.1


def uses_a_lock(config):
    with LOCK:
        report({"x": RATE})


def plain(config):
    report({"x": RATE})
"""


def script_functions() -> dict[str, object]:
    """The functions of SCRIPT as a script's own (`python script.py`): a
    module Ray cannot import on a worker, so they are sent by value, with
    the globals they use."""
    namespace: dict[str, object] = {"__name__": "a_users_script"}
    exec(SCRIPT, namespace)
    return namespace


def test_diagnose_serialization_names_the_global_that_does_not_serialize() -> None:
    functions = script_functions()
    assert diagnose_serialization(functions["plain"]) is True  # type: ignore[arg-type]
    assert diagnose_serialization(functions["uses_a_lock"]) == {"LOCK"}  # type: ignore[arg-type]


def test_diagnose_serialization_finds_a_closed_over_variable() -> None:
    lock = threading.Lock()

    def closure(config: dict[str, object]) -> None:
        with lock:
            pass

    assert diagnose_serialization(closure) == {"lock"}


def test_date_str_is_rays_directory_date() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d", date_str())


# -- ray.air.session ---------------------------------------------------------------------------


def with_session(config: dict[str, object]) -> None:
    from tunecore import session  # noqa: PLC0415 - as a Ray 2.x script writes it

    session.report(
        {
            "name": session.get_trial_name(),
            "id": session.get_trial_id(),
            "dir": session.get_trial_dir(),
            "world": session.get_world_size(),
            "cpus": session.get_trial_resources().required_resources["CPU"],
            "resumed": session.get_checkpoint() is not None,
        }
    )


def test_session_forwards_to_the_trial(tmp_path: Path) -> None:
    trainable = tune.with_resources(with_session, {"cpu": 2})
    (result,) = Tuner(trainable, run_config=run_config(tmp_path, name="sessions")).fit()
    assert result.metrics["id"] == result.metrics["trial_id"]
    assert result.metrics["dir"] == str(result.path)
    assert Path(result.path).name.startswith(str(result.metrics["name"]))
    assert result.metrics["world"] == 1
    assert result.metrics["cpus"] == 2
    assert result.metrics["resumed"] is False


# -- Trainable.get_config, result constants ----------------------------------------------------


class Config(tune.Trainable):
    def step(self) -> dict[str, object]:
        return {"lr": self.get_config()["lr"]}


def test_trainable_get_config_is_its_config() -> None:
    trainable = Config({"lr": 0.5})
    assert trainable.get_config() == {"lr": 0.5}
    assert trainable.train()["lr"] == 0.5


def test_result_constants_have_rays_values() -> None:
    assert "experiment_id" in tune.result.DEBUG_METRICS
    assert tune.result.CONFIG_PREFIX in tune.result.DEBUG_METRICS


# -- names deliberately left out ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "says"),
    [
        ("from tunecore import TorchTrainer", "tunecore.integration.ray_train.TuneReportCallback"),
        ("from tunecore import get_world_rank", "tunecore.get_context() is Ray Train's"),
        ("from tunecore import AcquiredResources", "tunecore.with_resources"),
        ("import tunecore.rllib.algorithms.ppo", "RLlib"),
        ("from tunecore.logger import CSVLogger", "CSVLoggerCallback"),
        ("from tunecore.logger import Logger", "LoggerCallback subclass"),
        ("from tunecore.logger import UnifiedLogger", "Ray Tune 2.60 has none"),
        ("from tunecore.result import EXPR_PARAM_PICKLE_FILE", "params.json"),
        ("from tunecore.search import SearchGenerator", "TuneConfig(search_alg"),
        ("from tunecore.sklearn import TuneSearchCV", "tune-sklearn"),
        ("from tunecore.schedulers.pbt import _PBTTrialState", "custom_explore_fn"),
        ("from tunecore.schedulers.pbt import _fill_config", "TrialScheduler subclass"),
        ("from tunecore.experiment.trial import _Location", "trial.node_ip"),
        ("from tunecore.result import TRIAL_INFO", "tunecore.get_context()"),
        ("from tunecore.constants import EXPR_PARAM_PICKLE_FILE", "params.json"),
        ("from tunecore.search.variant_generator import _get_value", "generate_variants"),
        ("from tunecore.impl.tuner_internal import TunerInternal", "tunecore.Tuner"),
        ("from tunecore.impl import placeholder", "tunecore.impl.config"),
        ("from tunecore.experimental.output import TuneReporterBase", "ProgressReporter"),
        ("from tunecore.utils.file_transfer import sync_dir_between_nodes", "from Ray itself"),
        ("from tunecore.search.repeater import _TrialGroup", "TRIAL_INDEX"),
        ("from tunecore.integration.wandb import WandbLoggerCallback", "tunecore.integrations"),
        ("from tunecore.checkpoint import Checkpoint", "tunecore.Checkpoint"),
        ("from tunecore.utils.placement_groups import PlacementGroupFactory", "from tunecore"),
        (
            "from tunecore.schedulers.resource_changing_scheduler import "
            "evenly_distribute_cpus_gpus",
            "DistributeResources()",
        ),
        ("from tunecore.analysis import Analysis", "ExperimentAnalysis(path)"),
        ("from tunecore import Analysis", "fetch_trial_dataframes"),
        ("from tunecore.execution import trial_runner", "Ray Tune's trial runner"),
        ("from tunecore.syncer import Syncer", "RunConfig(storage_filesystem=...)"),
        ("from tunecore.syncer import _DefaultSyncer", "has no ray.tune.syncer._DefaultSyncer"),
        ("from tunecore.callbacks.comet import CometLoggerCallback", "tunecore.integrations"),
        ("from tunecore.search.flaml import BlendSearch, CFO", "tunecore.search.Searcher subclass"),
        ("from tunecore.search.skopt import SkOptSearch", "scikit-optimize's Optimizer"),
        ("from tunecore.search.dragonfly import DragonflySearch", "2.60 has no such module"),
        ("from tunecore.search.sigopt import SigOptSearch", "OptunaSearch"),
        ("from tunecore.integration.mxnet import TuneReportCallback", "tunecore.report"),
    ],
)
def test_a_name_left_out_says_what_to_use_instead(statement: str, says: str) -> None:
    with pytest.raises(ImportError, match=re.escape(says)):
        exec(statement, {})


def test_other_missing_names_fail_as_usual() -> None:
    with pytest.raises(ImportError, match="cannot import name 'no_such_name'"):
        exec("from tunecore import no_such_name", {})
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'tunecore\.no_such_module'"):
        importlib.import_module("tunecore.no_such_module")
    assert not hasattr(tune, "no_such_name")


# -- Searcher.add_evaluated_trials -------------------------------------------------------------


class Recorder(tune.search.Searcher):
    def __init__(self) -> None:
        super().__init__(metric="score", mode="max")
        self.points: list[tuple[dict[str, object], object, bool, bool]] = []

    def add_evaluated_point(
        self,
        parameters: dict[str, object],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        self.points.append((parameters, value, error, pruned))


def score_or_fail(config: dict[str, object]) -> None:
    if config["x"] == 3:
        raise ValueError("x=3 fails")
    tune.report({"score": float(config["x"]) * 10})  # type: ignore[arg-type]


def test_add_evaluated_trials_tells_each_trial_that_reported_the_metric(tmp_path: Path) -> None:
    results = Tuner(
        score_or_fail,
        param_space={"x": tune.grid_search([1, 2, 3])},
        run_config=run_config(tmp_path),
    ).fit()
    searcher = Recorder()
    searcher.add_evaluated_trials(results, metric="score")
    assert sorted((p["x"], v, e, pruned) for p, v, e, pruned in searcher.points) == [
        (1, 10.0, False, False),
        (2, 20.0, False, False),
    ]
    one = Recorder()
    one.add_evaluated_trials(results.trials[0], metric="score")
    assert [value for _, value, _, _ in one.points] == [10.0]
    with pytest.warns(UserWarning, match="metric='scor'"):
        Recorder().add_evaluated_trials(list(results.trials), metric="scor")
    with pytest.raises(NotImplementedError, match="got int"):
        Recorder().add_evaluated_trials(3, metric="score")
    with pytest.raises(NotImplementedError, match="does not implement add_evaluated_point"):
        tune.search.Searcher().add_evaluated_trials(results, metric="score")


# -- module paths scripts import from ----------------------------------------------------------


def test_rays_module_paths_reach_the_same_objects() -> None:
    from tunecore.config import RunConfig as AirRunConfig  # noqa: PLC0415
    from tunecore.experimental.output import AirVerbosity  # noqa: PLC0415
    from tunecore.impl.config import (  # noqa: PLC0415
        CheckpointConfig as ImplCheckpointConfig,
    )
    from tunecore.impl.config import FailureConfig as ImplFailureConfig  # noqa: PLC0415
    from tunecore.impl.config import RunConfig as ImplRunConfig  # noqa: PLC0415
    from tunecore.schedulers.resource_changing_scheduler import (  # noqa: PLC0415
        PlacementGroupFactory,
    )
    from tunecore.search.bohb import BOHB, TuneBOHB  # noqa: PLC0415
    from tunecore.search.searcher import ConcurrencyLimiter  # noqa: PLC0415
    from tunecore.stopper.maximum_iteration import MaximumIterationStopper  # noqa: PLC0415
    from tunecore.stopper.stopper import Stopper  # noqa: PLC0415

    assert AirRunConfig is tune.RunConfig
    assert ImplRunConfig is tune.RunConfig
    assert ImplCheckpointConfig is tune.CheckpointConfig
    assert ImplFailureConfig is tune.FailureConfig
    assert ConcurrencyLimiter is tune.search.ConcurrencyLimiter
    assert PlacementGroupFactory is tune.PlacementGroupFactory
    assert BOHB is TuneBOHB
    assert MaximumIterationStopper is tune.stopper.MaximumIterationStopper
    assert Stopper is tune.Stopper
    assert RunConfig(verbose=AirVerbosity.VERBOSE).verbose == 2


# -- ray.tune.experimental.output.get_air_verbosity --------------------------------------------


def test_get_air_verbosity_caps_the_level_at_2(monkeypatch: pytest.MonkeyPatch) -> None:
    from tunecore.experimental.output import AirVerbosity, get_air_verbosity  # noqa: PLC0415

    monkeypatch.delenv("RAY_AIR_NEW_OUTPUT", raising=False)
    assert get_air_verbosity(0) is AirVerbosity.SILENT
    assert get_air_verbosity(Verbosity.V1_EXPERIMENT) is AirVerbosity.DEFAULT
    assert get_air_verbosity(Verbosity.V3_TRIAL_DETAILS) is AirVerbosity.VERBOSE
    assert get_air_verbosity(7) is AirVerbosity.VERBOSE
    assert get_air_verbosity(AirVerbosity.VERBOSE) is AirVerbosity.VERBOSE
    with pytest.raises(ValueError, match="-1"):
        get_air_verbosity(-1)


def test_get_air_verbosity_is_none_when_rays_older_output_is_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tunecore.experimental.output import get_air_verbosity  # noqa: PLC0415

    monkeypatch.setenv("RAY_AIR_NEW_OUTPUT", "0")
    assert get_air_verbosity(2) is None
    monkeypatch.setenv("RAY_AIR_NEW_OUTPUT", "1")
    assert get_air_verbosity(2) == 2


def test_rays_result_class_is_reached_from_its_modules() -> None:
    """`from ray.air.result import Result` (users' type hints and helpers)
    rewrites to `tunecore.result`, which also holds the result keys; and
    `ray.tune.result_grid` names the class beside `ResultGrid`."""
    from tunecore.result import TRAINING_ITERATION, Result  # noqa: PLC0415
    from tunecore.result_grid import Result as GridResult  # noqa: PLC0415

    assert Result is tune.Result
    assert GridResult is tune.Result
    assert TRAINING_ITERATION == "training_iteration"
    assert "Result" in dir(tune.result)


def test_search_message_templates_take_rays_placeholders() -> None:
    message = tune.search.UNDEFINED_SEARCH_SPACE.format(cls="MySearch", space="space")
    assert "MySearch" in message
    assert "`space`" in message
    assert "metric` (None)" in tune.search.UNDEFINED_METRIC_MODE.format(
        cls="MySearch", metric=None, mode=None
    )
    assert "`points`" in tune.search.UNRESOLVED_SEARCH_SPACE.format(cls="S", par="points")


# -- tunecore.examples.pbt_function ------------------------------------------------------------


def test_pbt_function_reports_and_checkpoints_as_rays(tmp_path: Path) -> None:
    from tunecore.examples.pbt_function import optimal_lr, pbt_function  # noqa: PLC0415

    (result,) = Tuner(
        pbt_function,
        param_space={"lr": 0.005, "checkpoint_interval": 3},
        run_config=run_config(tmp_path, stop={"training_iteration": 5}),
    ).fit()
    metrics = result.metrics
    assert metrics["training_iteration"] == 5
    assert metrics["cur_lr"] == 0.005
    assert 0.001 <= float(metrics["optimal_lr"]) <= 0.01  # type: ignore[arg-type]
    assert result.checkpoint is not None
    with result.checkpoint.as_directory() as directory:
        saved = json.loads((Path(directory) / "checkpoint.json").read_text())
    assert saved["step"] == 3  # every third step, counted from 1
    assert optimal_lr(0.0) == 0.001
    assert optimal_lr(100.0) == 0.01
    assert optimal_lr(150.0) == pytest.approx(0.005)
    assert optimal_lr(250.0) == 0.001


def test_train_context_and_export_format_under_rays_names() -> None:
    from tunecore.experiment.trial import ExportFormat  # noqa: PLC0415

    assert tune.TrainContext is tune.TuneContext
    assert RunConfig(export_formats=[ExportFormat.MODEL, ExportFormat.ONNX]).export_formats == [
        "model",
        "onnx",
    ]


# -- stateful callbacks ------------------------------------------------------------------------


class CountResults(tune.Callback):
    """Counts results across runs of one experiment (Ray's stateful callback)."""

    def __init__(self) -> None:
        self.count = 0

    def on_trial_result(
        self, iteration: int, trials: object, trial: object, result: object
    ) -> None:
        self.count += 1

    def get_state(self) -> dict[str, object]:
        return {"count": self.count}

    def set_state(self, state: dict[str, object]) -> None:
        self.count = int(state["count"])  # type: ignore[call-overload]


def three_results_then_fail_once(config: dict[str, object]) -> None:
    checkpoint = tune.get_checkpoint()
    for step in range(3):
        tune.report({"step": step})
    if checkpoint is None and config["fail"]:
        with tempfile.TemporaryDirectory() as directory:
            tune.report({"step": 3}, checkpoint=tune.Checkpoint.from_directory(directory))
        raise RuntimeError("fails the first time")


def test_a_restored_callback_gets_back_its_state(tmp_path: Path) -> None:
    first = CountResults()
    results = Tuner(
        three_results_then_fail_once,
        param_space={"fail": True},
        run_config=run_config(tmp_path, name="stateful", callbacks=[first]),
    ).fit()
    assert first.count == 4
    again = CountResults()
    Tuner.restore(
        str(results.experiment_path),
        three_results_then_fail_once,
        resume_errored=True,
        callbacks=[again],
    ).fit()
    assert again.count == 4 + 3  # counted on from the first run's 4


def test_a_fresh_run_starts_its_callbacks_afresh_and_a_state_must_be_json(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Unsaveable(CountResults):
        def get_state(self) -> dict[str, object]:
            return {"lock": threading.Lock()}

    Tuner(
        three_results_then_fail_once,
        param_space={"fail": False},
        run_config=run_config(tmp_path, name="one", callbacks=[Unsaveable()]),
    ).fit()
    assert "not JSON" in caplog.text
    fresh = CountResults()
    Tuner(
        three_results_then_fail_once,
        param_space={"fail": False},
        run_config=run_config(tmp_path, name="two", callbacks=[fresh]),
    ).fit()
    assert fresh.count == 3
