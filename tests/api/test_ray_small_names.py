"""Small names of Ray 2.60 that scripts import or read and that a static
scan of Ray's docs, release tests and users' scripts found missing
(/work/helpers/unseen7-findings.md): each does what Ray's does, or, where
tunecore deliberately differs (no pickles), says so.

Ray's own `unflattened_lookup` (`ray._private.dict`, importable without
Ray Train) is the oracle for tunecore's."""

from __future__ import annotations

import json
import logging
import math
import pickle
from pathlib import Path
from typing import Any

import cloudpickle
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from ray._private.dict import unflattened_lookup as rays_unflattened_lookup

import tunecore as tune
from tunecore import Checkpoint, ExperimentAnalysis, Result, ResultGrid, RunConfig, TuneConfig
from tunecore.callback import Callback, CallbackList
from tunecore.search.sample import Float, RandomState
from tunecore.utils import unflattened_lookup
from tunecore.utils.serialization import TuneFunctionDecoder, TuneFunctionEncoder


def run_config(tmp_path: Path, **fields: Any) -> RunConfig:
    return RunConfig(storage_path=str(tmp_path), executor="in_process", verbose=0, **fields)


# -- tunecore.constants (ray.air.constants, ray.train.constants, ray.tune.constants) ---------------


def test_the_constants_scripts_import_have_rays_values() -> None:
    from tunecore import constants, result  # noqa: PLC0415
    from tunecore.api.plan import CHDIR_VARIABLE  # noqa: PLC0415
    from tunecore.shell.storage.resolve import resolve_storage  # noqa: PLC0415

    assert (constants.TRAINING_ITERATION, constants.TIMESTAMP, constants.TIME_THIS_ITER_S) == (
        "training_iteration",
        "timestamp",
        "time_this_iter_s",
    )
    files = (
        constants.EXPR_PARAM_FILE,
        constants.EXPR_PROGRESS_FILE,
        constants.EXPR_RESULT_FILE,
        constants.EXPR_ERROR_FILE,
    )
    assert files == ("params.json", "progress.csv", "result.json", "error.txt")
    assert constants.EXPR_RESULT_FILE == result.EXPR_RESULT_FILE
    assert constants.RAY_CHDIR_TO_TRIAL_DIR == CHDIR_VARIABLE  # the variable tunecore reads
    spec, _ = resolve_storage(None, None)  # where an experiment goes without storage_path
    assert spec.uri == constants.DEFAULT_STORAGE_PATH


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("TIME_TOTAL_S", "tunecore.result.TIME_TOTAL_S ('time_total_s')"),
        ("CHECKPOINT_DIR_NAME", "Result.checkpoint"),
        ("EXPR_PARAM_PICKLE_FILE", "params.json"),
        ("EXPR_ERROR_PICKLE_FILE", "error.txt"),
        ("MODEL_KEY", "Ray's internal constants"),
        ("RAY_TUNE_CALLBACKS_ENV_VAR", "Ray's internal constants"),
    ],
)
def test_rays_internal_constants_say_what_to_use(name: str, says: str) -> None:
    with pytest.raises(ImportError, match=f"tunecore.constants.{name}: .*{_escaped(says)}"):
        exec(f"from tunecore.constants import {name}", {})


def test_a_name_ray_has_not_either_is_an_attribute_error() -> None:
    import tunecore.constants  # noqa: PLC0415

    assert not hasattr(tunecore.constants, "NO_SUCH_CONSTANT")


def _escaped(text: str) -> str:
    import re  # noqa: PLC0415

    return re.escape(text)


# -- tunecore.utils.serialization ------------------------------------------------------------------


def train(config: dict[str, Any]) -> None:
    """A function a config refers to."""


class Model:
    def __repr__(self) -> str:
        return "Model(3 layers)"


def test_functions_and_objects_are_encoded_as_readable_placeholders_never_pickles() -> None:
    document = {
        "fn": train,
        "model": Model(),
        "array": np.arange(3),
        "scalar": np.float32(0.5),
        "plain": {"lr": 0.1, "tags": ["a"]},
    }
    text = json.dumps(document, cls=TuneFunctionEncoder)
    assert "CLOUDPICKLE" not in text
    assert json.loads(text, cls=TuneFunctionDecoder) == {
        "fn": {"_type": "FUNCTION", "value": f"{__name__}:train"},
        "model": {"_type": "OBJECT", "class": f"{__name__}:Model", "value": "Model(3 layers)"},
        "array": [0, 1, 2],
        "scalar": 0.5,
        "plain": {"lr": 0.1, "tags": ["a"]},
    }


@pytest.mark.parametrize("allow_cloudpickle", [False, True])
def test_rays_cloudpickle_payload_is_refused_even_when_allowed(allow_cloudpickle: bool) -> None:
    """Ray's encoder wrote `{"_type": "CLOUDPICKLE_FALLBACK", "value": hex}`;
    loading it would run code, so tunecore never does."""
    payload = cloudpickle.dumps(train).hex()
    text = json.dumps({"fn": {"_type": "CLOUDPICKLE_FALLBACK", "value": payload}})
    decoder = TuneFunctionDecoder(allow_cloudpickle=allow_cloudpickle)
    with pytest.raises(ValueError, match="never unpickles") as refused:
        decoder.decode(text)
    assert ("does not change that" in str(refused.value)) == allow_cloudpickle


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


@given(JSON)
def test_plain_json_goes_through_unchanged(value: Any) -> None:
    assert json.loads(json.dumps(value, cls=TuneFunctionEncoder), cls=TuneFunctionDecoder) == value


# -- tunecore.utils.unflattened_lookup -------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "0", "1", "a/b"])
NESTED = st.recursive(
    st.integers(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=12,
)


def _outcome(lookup: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        return ("value", lookup(*args, **kwargs))
    except Exception as error:  # the oracle's exception type is the behaviour
        return ("raises", type(error))


@given(
    st.dictionaries(KEYS, NESTED, max_size=4),
    st.lists(st.sampled_from(["a", "b", "0", "1", "x"]), min_size=1, max_size=3),
    st.booleans(),
)
def test_unflattened_lookup_answers_as_rays_does(
    lookup: dict[str, Any], parts: list[str], with_default: bool
) -> None:
    flat_key = "/".join(parts)
    kwargs = {"default": "missing"} if with_default else {}
    assert _outcome(unflattened_lookup, flat_key, lookup, **kwargs) == _outcome(
        rays_unflattened_lookup, flat_key, lookup, **kwargs
    )


def test_unflattened_lookup_reads_a_progress_columns_nested_metric() -> None:
    result = {"eval": {"acc": [0.5, 0.75]}, "eval/loss": 0.1}
    assert unflattened_lookup("eval/acc/1", result) == 0.75
    assert unflattened_lookup("eval/loss", result) == 0.1  # a key holding the delimiter
    assert unflattened_lookup("eval/f1", result, default=None) is None
    with pytest.raises(KeyError, match="f1"):
        unflattened_lookup("eval/f1", result)


# -- tunecore.search.sample.RandomState ------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: 7,
        lambda: np.random.default_rng(7),
        lambda: np.random.RandomState(7),
    ],
)
def test_random_state_names_what_sample_takes(make: Any) -> None:
    state: RandomState = make()
    again: RandomState = make()
    domain = Float(0.0, 1.0).uniform()
    drawn = list(domain.sample(size=3, random_state=state))
    assert drawn == list(domain.sample(size=3, random_state=again))
    assert all(0.0 <= value < 1.0 for value in drawn)


# -- Checkpoint.from_dict and the rest Ray removed in 2.7 ------------------------------------------


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("from_dict", "Checkpoint.from_directory(checkpoint_dir)"),
        ("to_dict", "checkpoint.as_directory()"),
        ("from_bytes", "Checkpoint.from_directory(checkpoint_dir)"),
        ("from_uri", "Checkpoint(path='s3://bucket/dir')"),
        ("get_preprocessor", "checkpoint.set_metadata"),
    ],
)
def test_a_method_ray_removed_says_what_to_use(tmp_path: Path, name: str, says: str) -> None:
    """Ray 2.60's `Checkpoint.from_dict` is an AttributeError naming the way
    to store a dict (its metaclass's); tunecore's advice is its own."""
    for owner in (Checkpoint, Checkpoint.from_directory(tmp_path)):
        assert not hasattr(owner, name)
        with pytest.raises(AttributeError, match=f"does not support `{name}\\(\\)`") as refused:
            getattr(owner, name)
        assert says in str(refused.value)


def test_a_checkpoint_still_encodes_as_its_path_alone(tmp_path: Path) -> None:
    import msgspec  # noqa: PLC0415

    checkpoint = Checkpoint.from_directory(tmp_path)
    assert msgspec.json.decode(msgspec.json.encode(checkpoint)) == {"path": str(tmp_path)}


# -- Result(...) built directly, as Ray's public dataclass -----------------------------------------


def test_a_result_built_directly_answers_with_what_it_was_given(tmp_path: Path) -> None:
    checkpoint = Checkpoint.from_directory(tmp_path)
    frame = pd.DataFrame([{"loss": 0.5}, {"loss": 0.25}])
    metrics = {"loss": 0.25, "config": {"lr": 0.1}, "trial_id": "abc"}
    result = Result(
        metrics=metrics,
        checkpoint=checkpoint,
        error=None,
        path=str(tmp_path),
        metrics_dataframe=frame,
        best_checkpoints=[(checkpoint, {"loss": 0.25})],
    )
    assert isinstance(result, Result)
    assert result.metrics is metrics
    assert result.config == {"lr": 0.1}
    assert result.checkpoint == checkpoint
    assert result.error is None
    assert result.path == str(tmp_path)
    assert result.metrics_dataframe is frame
    assert result.best_checkpoints == [(checkpoint, {"loss": 0.25})]
    assert result.get_best_checkpoint("loss", "min") == checkpoint
    assert result.filesystem.type_name == "local"
    assert result.status == "TERMINATED"
    assert result.trial_id == "abc"


def test_a_result_built_positionally_has_rays_defaults() -> None:
    error = ValueError("boom")
    result: Any = Result(None, None, error, "/results/trial")  # Ray's fields are Optional
    assert (result.metrics, result.config, result.checkpoint) == (None, None, None)
    assert (result.metrics_dataframe, result.best_checkpoints) == (None, None)
    assert result.error is error
    assert result.status == "ERROR"
    with pytest.raises(RuntimeError, match="kept no persistent checkpoint"):
        result.get_best_checkpoint("loss", "min")
    with pytest.raises(TypeError, match="missing 4 required positional arguments"):
        Result()  # type: ignore[call-arg]
    with pytest.raises(AttributeError, match="read-only"):
        result.checkpoint = None


def test_a_result_built_directly_compares_and_pickles_as_its_fields() -> None:
    result = Result({"loss": 1.0}, None, None, "/results/trial")
    assert result == Result({"loss": 1.0}, None, None, "/results/trial")
    assert result != Result({"loss": 2.0}, None, None, "/results/trial")
    assert pickle.loads(pickle.dumps(result)) == result
    assert repr(result).startswith("Result(\n  metrics={'loss': 1.0}")


def test_a_result_built_directly_prints_as_rays_does() -> None:
    """Ray 2.60's `Result.__repr__` (ray/air/result.py): the error's type
    first, the metrics without the keys Ray fills in, one field a line."""
    metrics = {"loss": 1.0, "training_iteration": 3, "config": {"a": 1}, "pid": 7, "done": True}
    assert repr(Result(metrics, None, ValueError("bad"), "/results/trial")) == (
        "Result(\n  error='ValueError',\n  metrics={'loss': 1.0},\n"
        "  path='/results/trial',\n  filesystem='local',\n  checkpoint=None\n)"
    )
    assert repr(Result(None, None, None, "/results/trial")).startswith("Result(\n  metrics=None,")


def test_a_trials_result_prints_its_reported_metrics_as_ray_does(tmp_path: Path) -> None:
    """`print(results[0])` (Ray's doc_code/tune.py): the metrics the trial
    reported, without those filled in, its path, filesystem and checkpoint."""

    def train_model(config: dict[str, Any]) -> dict[str, Any]:
        if config["fail"]:
            raise ValueError("failed")
        return {"score": "model_0", "other_data": 3}

    grid = tune.Tuner(
        train_model,
        param_space={"fail": tune.grid_search([False, True])},
        run_config=run_config(tmp_path),
    ).fit()
    passed, failed = grid
    assert repr(passed) == (
        "Result(\n  metrics={'score': 'model_0', 'other_data': 3},\n"
        f"  path={passed.path!r},\n  filesystem='local',\n  checkpoint=None\n)"
    )
    assert repr(failed) == (
        f"Result(\n  error={type(failed.error).__name__!r},\n  metrics={{}},\n"
        f"  path={failed.path!r},\n  filesystem='local',\n  checkpoint=None\n)"
    )


class Settings:
    """An object a trial reports (JSON cannot hold it)."""

    def __init__(self, depth: int) -> None:
        self.depth = depth

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Settings) and other.depth == self.depth

    __hash__ = None  # type: ignore[assignment]


def report_settings(config: dict[str, Any]) -> None:
    tune.report({"loss": 0.5, "settings": Settings(config["depth"])})


def test_a_result_holding_reported_objects_keeps_them_through_a_pickle(tmp_path: Path) -> None:
    """A grid a Tuner in a Ray task returns is pickled on its way back; a
    result holding the objects a trial reported kept only its own two
    fields (its class's `__slots__`), not its trial's state."""
    grid = tune.Tuner(
        report_settings, param_space={"depth": 3}, run_config=run_config(tmp_path)
    ).fit()
    assert grid[0].metrics["settings"] == Settings(3)
    copy: Any = cloudpickle.loads(cloudpickle.dumps(grid))
    assert copy[0].metrics["settings"] == Settings(3)
    assert copy[0].config == {"depth": 3}
    assert copy[0].trial_id == grid[0].trial_id


# -- ResultGrid(experiment_analysis) ---------------------------------------------------------------


def score(config: dict[str, Any]) -> None:
    tune.report({"score": config["x"] * 10, "loss": -config["x"]})


def test_a_result_grid_of_an_analysis_has_its_results_and_defaults(tmp_path: Path) -> None:
    """Ray's constructor: `ResultGrid(experiment_analysis)`, whose
    `get_best_result()` takes the analysis's default metric and mode."""
    grid = tune.Tuner(
        score,
        param_space={"x": tune.grid_search([1, 2, 3])},
        tune_config=TuneConfig(metric="loss", mode="min"),
        run_config=run_config(tmp_path, name="exp"),
    ).fit()
    analysis = ExperimentAnalysis(str(tmp_path / "exp"), default_metric="score", default_mode="min")
    from_analysis = ResultGrid(analysis)
    assert list(from_analysis) == list(ResultGrid.from_path(tmp_path / "exp"))
    assert [t.trial_id for t in from_analysis.trials] == [r.trial_id for r in grid]
    assert from_analysis.get_best_result().config == {"x": 1}  # the analysis's score, min
    assert grid.get_best_result().config == {"x": 3}  # the experiment's loss, min
    assert from_analysis.experiment_path == grid.experiment_path


# -- tunecore.callback.CallbackList ----------------------------------------------------------------


class Counter(Callback):
    def __init__(self) -> None:
        self.results = 0

    def on_trial_result(self, iteration: int, trials: Any, trial: Any, result: Any) -> None:
        self.results += 1

    def get_state(self) -> dict[str, object] | None:
        return {"results": self.results}

    def set_state(self, state: dict[str, object]) -> None:
        self.results = int(state["results"])  # type: ignore[call-overload]


def test_a_callback_list_calls_each_callback_and_holds_their_states(tmp_path: Path) -> None:
    first, second, stateless = Counter(), Counter(), Callback()
    both = CallbackList([first, second, stateless])
    tune.Tuner(
        score,
        param_space={"x": tune.grid_search([1, 2])},
        run_config=run_config(tmp_path, callbacks=[both]),
    ).fit()
    assert (len(both), both[0], both[2]) == (3, first, stateless)
    assert both.IS_CALLBACK_CONTAINER
    assert (first.results, second.results) == (2, 2)
    assert both.get_state() == {"0": {"results": 2}, "1": {"results": 2}, "2": None}
    assert CallbackList([Callback()]).get_state() is None  # nothing to save, as in Ray

    assert not both.can_restore(tmp_path)
    both.save_to_dir(tmp_path, session_str="2024-01-01")
    assert (tmp_path / "callback-states-2024-01-01.json").is_file()  # JSON, not Ray's .pkl
    restored = CallbackList([Counter(), Counter(), Callback()])
    assert restored.can_restore(tmp_path)
    restored.restore_from_dir(tmp_path)
    assert [c.results for c in restored.callbacks[:2]] == [2, 2]  # type: ignore[attr-defined]
    ray_keyed = CallbackList([Counter()])
    ray_keyed.set_state({0: {"results": 5}})  # Ray's states are keyed by number
    assert ray_keyed[0].results == 5  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="Unable to find checkpoint"):
        restored.restore_from_dir(tmp_path / "exp")


def test_a_callback_list_refuses_a_state_json_cannot_hold(tmp_path: Path) -> None:
    class Unsaveable(Callback):
        def get_state(self) -> dict[str, object] | None:
            return {"model": Model()}

    with pytest.raises(TypeError, match="not JSON"):
        CallbackList([Unsaveable()]).save_to_dir(tmp_path)
    assert list(tmp_path.iterdir()) == []


# -- Tuner(_tuner_kwargs=...) --------------------------------------------------------------------


class Steps(tune.Trainable):
    def step(self) -> dict[str, float]:
        return {"loss": 1.0 / (self.iteration + 1)}

    def save_checkpoint(self, checkpoint_dir: str) -> dict[str, int]:
        return {"iteration": self.iteration}

    def load_checkpoint(self, checkpoint: Any) -> None:
        pass


def test_tuner_kwargs_set_what_tune_run_would(tmp_path: Path) -> None:
    """Users' scripts pass `{"checkpoint_at_end": True, "checkpoint_freq": 1}`
    to an RLlib-style class trainable: each iteration is checkpointed."""
    grid = tune.Tuner(
        Steps,
        run_config=run_config(tmp_path, stop={"training_iteration": 3}),
        _tuner_kwargs={"checkpoint_at_end": True, "checkpoint_freq": 1, "keep_checkpoints_num": 2},
    ).fit()
    [result] = grid
    assert [Path(c.path).name for c, _ in result.best_checkpoints] == [
        "checkpoint_000002",
        "checkpoint_000003",
    ]


def fail_on_two(config: dict[str, Any]) -> None:
    if config["x"] == 2:
        raise ValueError("x=2 fails")
    tune.report({"loss": float(config["x"])})


def test_tuner_kwargs_fail_fast_ends_the_experiment_at_the_first_error(tmp_path: Path) -> None:
    """Ray's Horovod example: `_tuner_kwargs={"fail_fast": True}`."""
    grid = tune.Tuner(
        fail_on_two,
        param_space={"x": tune.grid_search([2, 1, 3])},
        tune_config=TuneConfig(max_concurrent_trials=1),
        run_config=run_config(tmp_path),
        _tuner_kwargs={"fail_fast": True},
    ).fit()
    assert [(r.config, r.status) for r in grid] == [({"x": 2}, "ERROR")]  # none after it
    without = tune.Tuner(
        fail_on_two,
        param_space={"x": tune.grid_search([2, 1, 3])},
        tune_config=TuneConfig(max_concurrent_trials=1),
        run_config=run_config(tmp_path),
    ).fit()
    assert [r.status for r in without] == ["ERROR", "TERMINATED", "TERMINATED"]


def test_tuner_kwargs_override_the_configs_and_name_what_they_cannot_be() -> None:
    tuner = tune.Tuner(
        score,
        param_space={"x": 1},
        tune_config=TuneConfig(metric="loss", mode="min", num_samples=2),
        run_config=RunConfig(name="given"),
        _tuner_kwargs={"config": {"x": 2}, "num_samples": 4, "name": "kw", "max_failures": 3},
    )
    assert (tuner._tune.num_samples, tuner._tune.metric, tuner._space) == (4, "loss", {"x": 2})
    assert (tuner._run.name, tuner._run.failure_config.max_failures) == ("kw", 3)
    with pytest.raises(TypeError, match=r"'bogus' is not an argument of tune\.run"):
        tune.Tuner(score, _tuner_kwargs={"bogus": 1})
    with pytest.raises(ValueError, match=r"Tuner\.restore"):
        tune.Tuner(score, _tuner_kwargs={"resume": "AUTO"})
    with pytest.raises(DeprecationWarning, match="`local_dir` argument is deprecated"):
        tune.Tuner(score, _tuner_kwargs={"local_dir": "/tmp/results"})


# -- report(checkpoint_dir_name=...) ---------------------------------------------------------------


def report_named(config: dict[str, Any]) -> None:
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as directory:
        tune.report(
            {"loss": 0.5},
            checkpoint=Checkpoint.from_directory(directory),
            checkpoint_dir_name="my_checkpoint",
        )


def test_checkpoint_dir_name_is_ignored_with_a_warning_as_in_a_ray_tune_trial(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Ray 2.60's `ray.train.report(checkpoint_dir_name=)` logs that only
    Train V2 uses it and goes on; the checkpoint keeps its usual name."""
    with caplog.at_level(logging.WARNING):
        [result] = tune.Tuner(report_named, run_config=run_config(tmp_path)).fit()
    assert result.checkpoint is not None
    assert Path(result.checkpoint.path).name == "checkpoint_000001"
    assert any("checkpoint_dir_name='my_checkpoint'" in r.getMessage() for r in caplog.records)


# -- Ray 2.60's Trial attributes callbacks read --------------------------------------------------


class Reader(Callback):
    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def on_trial_result(self, iteration: int, trials: Any, trial: Any, result: Any) -> None:
        self.seen.append(
            (
                trial.local_dir,
                trial.relative_logdir,
                trial.stopping_criterion,
                trial.checkpoint_freq,
            )
        )


def test_a_callback_reads_rays_trial_attributes(tmp_path: Path) -> None:
    reader = Reader()
    tune.Tuner(
        Steps,
        run_config=run_config(
            tmp_path,
            name="exp",
            stop={"training_iteration": 2},
            callbacks=[reader],
            checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=2),
        ),
    ).fit()
    local_dir, relative_logdir, criterion, frequency = reader.seen[-1]
    assert local_dir == str(tmp_path / "exp")  # Ray 2.60: local_experiment_path
    assert relative_logdir is None  # Ray 2.60 keeps it, always None
    assert criterion == {"training_iteration": 2}
    assert math.isclose(criterion["training_iteration"], 2)
    assert frequency == 2
