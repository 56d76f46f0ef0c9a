"""Trial resources and attached objects as Ray Tune users write them:
`resources_per_trial` with memory, `Trainable.default_resource_request`,
`with_resources`, `PlacementGroupFactory` and `with_parameters`, run with
the in-process executor (what only Ray does is in tests/integration)."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import ray

import tunecore as tune
from tunecore import ResultGrid, RunConfig, TuneConfig, Tuner
from tunecore.cli import main
from tunecore.model import Resources, ResourcesUpdateRequested, TrialStatus
from tunecore.model.errors import TrainOnlyFieldError
from tunecore.shell.eventlog import read_log

PAYLOAD = "large-object-" + "x" * 2000


def fit(
    trainable: Any, tmp_path: Path, space: Mapping[str, Any] | None = None, **tune_config: Any
) -> ResultGrid:
    run = RunConfig(name="exp", storage_path=str(tmp_path), executor="in_process", verbose=0)
    return Tuner(
        trainable, param_space=space, tune_config=TuneConfig(**tune_config), run_config=run
    ).fit()


def train(config: dict[str, Any]) -> None:
    tune.report({"score": config.get("x", 1)})


class SixtyFourCpus(tune.Trainable):
    @classmethod
    def default_resource_request(cls, config: dict[str, Any]) -> object:
        return {"cpu": config.get("cpus", 64)}

    def step(self) -> dict[str, Any]:
        return {"score": 1, "done": True}


def by_config(results: ResultGrid, key: str) -> dict[object, tune.Result]:
    return {result.config[key]: result for result in results}


# -- bug 8: memory is Ray's memory, not a custom resource ----------------------


def test_memory_and_object_store_memory_are_not_custom_resources(tmp_path: Path) -> None:
    asks = {"cpu": 1, "memory": 2**20, "object_store_memory": 2**20}
    results = fit(train, tmp_path, resources_per_trial=asks)
    assert [r.status for r in results] == [TrialStatus.TERMINATED]
    assert results[0].metrics["score"] == 1


def test_a_memory_request_larger_than_the_machine_never_fits(tmp_path: Path) -> None:
    results = fit(train, tmp_path, resources_per_trial={"cpu": 1, "memory": 2**60})
    error = str(results[0].error or "")
    assert results[0].status is TrialStatus.ERROR
    assert "Insufficient cluster resources" in error
    assert "TiB memory but the whole cluster has" in error


# -- bug 9: default_resource_request is honoured --------------------------------


def test_default_resource_request_is_honoured(tmp_path: Path) -> None:
    results = fit(SixtyFourCpus, tmp_path)
    assert results[0].status is TrialStatus.ERROR
    assert "the trial requested 64 CPUs" in str(results[0].error or "")


class StaticRequest(tune.Trainable):
    """A user's Trainable declaring its request as a static method (Ray
    only ever calls `default_resource_request(config)`), through a dotted
    `tune.execution.placement_groups` path as the user's code spells it."""

    @staticmethod
    def default_resource_request(_config: dict[str, Any]) -> object:
        return tune.execution.placement_groups.PlacementGroupFactory([{"CPU": 64}])

    def step(self) -> dict[str, Any]:
        return {"score": 1, "done": True}


def test_a_static_default_resource_request_is_honoured(tmp_path: Path) -> None:
    results = fit(StaticRequest, tmp_path)
    assert results[0].status is TrialStatus.ERROR
    assert "the trial requested 64 CPUs" in str(results[0].error or "")


def test_default_resource_request_depends_on_the_config(tmp_path: Path) -> None:
    results = by_config(fit(SixtyFourCpus, tmp_path, {"cpus": tune.grid_search([1, 64])}), "cpus")
    assert results[1].status is TrialStatus.TERMINATED
    assert results[64].status is TrialStatus.ERROR
    events = read_log(tmp_path / "exp").events
    asked = [e.resources.cpu for e in events if isinstance(e, ResourcesUpdateRequested)]
    assert sorted(asked) == [1.0, 64.0]  # the answers are logged: replay needs no code
    assert tune.replay(tmp_path / "exp", quiet=True).state.done


def test_default_resource_request_and_resources_per_trial_together_is_an_error() -> None:
    with pytest.raises(ValueError, match="default_resource_request") as raised:
        Tuner(SixtyFourCpus, tune_config=TuneConfig(resources_per_trial={"cpu": 1}))
    assert "resources_per_trial={'cpu': 1}" in str(raised.value)


# -- with_resources and PlacementGroupFactory -----------------------------------


def test_with_resources_takes_a_dict(tmp_path: Path) -> None:
    results = fit(tune.with_resources(train, {"cpu": 1000}), tmp_path)
    assert "the trial requested 1000 CPUs" in str(results[0].error or "")


def test_with_resources_takes_a_function_of_the_config(tmp_path: Path) -> None:
    trainable = tune.with_resources(train, lambda config: {"cpu": config["x"]})
    results = by_config(fit(trainable, tmp_path, {"x": tune.grid_search([1, 500])}), "x")
    assert results[1].metrics["score"] == 1
    assert "the trial requested 500 CPUs" in str(results[500].error or "")


def test_with_resources_on_a_class_asks_for_the_group_sum(tmp_path: Path) -> None:
    group = tune.PlacementGroupFactory([{"CPU": 1}, {"CPU": 700}], strategy="SPREAD")
    results = fit(tune.with_resources(SixtyFourCpus, group), tmp_path)
    error = str(results[0].error or "")
    assert "the trial requested 701 CPUs" in error
    assert "in 2 bundles (SPREAD)" in error


def test_with_resources_and_resources_per_trial_together_is_an_error() -> None:
    with pytest.raises(ValueError, match="with_resources"):
        Tuner(
            tune.with_resources(train, {"cpu": 2}),
            tune_config=TuneConfig(resources_per_trial={"cpu": 1}),
        )


def test_a_placement_group_factory_reads_as_ray_s() -> None:
    group = tune.PlacementGroupFactory([{"CPU": 1, "GPU": 0.5}, {"CPU": 2}])
    assert group.bundles == [{"CPU": 1.0, "GPU": 0.5}, {"CPU": 2.0}]
    assert group.required_resources == {"CPU": 3.0, "GPU": 0.5}
    assert group.head_cpus == 1.0
    assert group.strategy == "PACK"
    assert group == tune.PlacementGroupFactory([{"CPU": 1, "GPU": 0.5}, {"CPU": 2}])
    resources = group.as_resources()
    assert (resources.cpu, resources.gpu, len(resources.bundles)) == (3.0, 0.5, 2)


def test_a_single_bundle_is_a_plain_request() -> None:
    resources = tune.PlacementGroupFactory([{"CPU": 2, "memory": 100}]).as_resources()
    assert resources == Resources(cpu=2, memory=100)


@pytest.mark.parametrize(
    ("bundles", "strategy", "message"),
    [
        ([], "PACK", "non-empty list"),
        ([{}, {}], "PACK", "asks for nothing"),
        ([{"CPU": 1}], "TIGHT", "strategy='TIGHT'"),
        ([{"CPU": -1}], "PACK", "bundles\\[0\\]\\['CPU'\\]=-1.0"),
    ],
)
def test_a_bad_placement_group_factory_says_what_is_wrong(
    bundles: list[dict[str, float]], strategy: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        tune.PlacementGroupFactory(bundles, strategy=strategy)


def _ray_placement_groups() -> Any:
    pytest.importorskip("fsspec")  # ray.tune needs it; ray[tune], which tunecore depends on, has it
    return pytest.importorskip("ray.tune.execution.placement_groups")


def test_ray_s_own_placement_group_factory_is_taken_by_with_resources(tmp_path: Path) -> None:
    """A library built on Ray Tune hands over Ray's own class (RLlib's
    `Algorithm.default_resource_request(config)`, which its Tune examples
    pass to `with_resources`): it asks for its bundles, not called as a
    function of the config (Ray's factory is callable: it makes the group)."""
    ray_groups = _ray_placement_groups()
    group = ray_groups.PlacementGroupFactory([{"CPU": 1}, {"CPU": 700}], strategy="SPREAD")
    error = str(fit(tune.with_resources(train, group), tmp_path)[0].error or "")
    assert "the trial requested 701 CPUs" in error
    assert "in 2 bundles (SPREAD)" in error


def test_ray_s_placement_group_factory_keeps_its_empty_head_bundle() -> None:
    """Ray's `bundles` leaves an empty head bundle out (`head_bundle_is_empty`
    says it was there): the trial's own worker then takes nothing, as in Ray."""
    ray_groups = _ray_placement_groups()
    group = ray_groups.PlacementGroupFactory([{}, {"CPU": 2}, {"CPU": 2}])
    config = TuneConfig(resources_per_trial=group)
    assert config.resources_per_trial == tune.PlacementGroupFactory([{}, {"CPU": 2}, {"CPU": 2}])
    assert not isinstance(config.resources_per_trial, ray_groups.PlacementGroupFactory)


def test_a_default_resource_request_may_answer_with_ray_s_factory(tmp_path: Path) -> None:
    ray_groups = _ray_placement_groups()

    class AsksRay(SixtyFourCpus):
        @classmethod
        def default_resource_request(cls, config: dict[str, Any]) -> object:
            return ray_groups.PlacementGroupFactory([{"CPU": config["cpus"]}, {"CPU": 1}])

    results = by_config(fit(AsksRay, tmp_path, {"cpus": tune.grid_search([1, 600])}), "cpus")
    assert results[1].metrics["score"] == 1
    assert "the trial requested 601 CPUs" in str(results[600].error or "")


def test_a_bad_resources_per_trial_names_the_field_and_value() -> None:
    with pytest.raises(ValueError, match="resources_per_trial\\['gpu'\\]=-1"):
        TuneConfig(resources_per_trial={"gpu": -1})


# -- with_parameters --------------------------------------------------------------


def train_with(config: dict[str, Any], data: str, scale: int = 1) -> None:
    tune.report({"length": len(data) * scale, "x": config["x"]})


class SetupWith(tune.Trainable):
    def setup(self, config: dict[str, Any], data: str = "") -> None:
        self.length = len(data)

    def step(self) -> dict[str, Any]:
        return {"length": self.length, "done": True}


def test_with_parameters_passes_objects_to_a_function(tmp_path: Path) -> None:
    trainable = tune.with_parameters(train_with, data=PAYLOAD, scale=2)
    results = fit(trainable, tmp_path, {"x": tune.grid_search([1, 2])})
    assert [r.metrics["length"] for r in results] == [2 * len(PAYLOAD)] * 2


def test_a_wrapped_trainable_is_named_by_what_it_wraps(tmp_path: Path) -> None:
    trainable = tune.with_resources(tune.with_parameters(train_with, data="d"), {"cpu": 1})
    results = fit(trainable, tmp_path, {"x": 1})
    assert Path(results[0].path).name.startswith("train_with_")


def test_with_parameters_passes_objects_to_setup(tmp_path: Path) -> None:
    results = fit(tune.with_parameters(SetupWith, data=PAYLOAD), tmp_path)
    assert results[0].metrics["length"] == len(PAYLOAD)


def test_with_parameters_keeps_the_function_s_checkpoint_dir_form(tmp_path: Path) -> None:
    def legacy(config: dict[str, Any], checkpoint_dir: str | None = None, data: str = "") -> None:
        tune.report({"length": len(data), "fresh": checkpoint_dir is None})

    results = fit(tune.with_parameters(legacy, data=PAYLOAD), tmp_path)
    assert results[0].metrics["length"] == len(PAYLOAD)
    assert results[0].metrics["fresh"] is True


def test_with_parameters_objects_are_never_persisted(tmp_path: Path) -> None:
    fit(tune.with_parameters(train_with, data=PAYLOAD), tmp_path, {"x": 1})
    written = [p for p in (tmp_path / "exp").rglob("*") if p.is_file()]
    assert written
    assert not [p for p in written if b"large-object-xxx" in p.read_bytes()]
    assert read_log(tmp_path / "exp").header.trainable.startswith("with_parameters(")


def train_or_fail(config: dict[str, Any], data: str) -> None:
    if data == "broken":
        raise RuntimeError("the data was broken")
    tune.report({"length": len(data)})


def test_restore_takes_the_objects_from_the_trainable_passed_again(tmp_path: Path) -> None:
    first = fit(tune.with_parameters(train_or_fail, data="broken"), tmp_path, {"x": 1})
    assert first[0].status is TrialStatus.ERROR
    again = tune.with_parameters(train_or_fail, data=PAYLOAD)
    restored = Tuner.restore(tmp_path / "exp", trainable=again, restart_errored=True).fit()
    assert restored[0].status is TrialStatus.TERMINATED
    assert restored[0].metrics["length"] == len(PAYLOAD)


def test_restore_in_a_new_process_without_the_trainable_says_so(tmp_path: Path) -> None:
    fit(tune.with_parameters(train_with, data=PAYLOAD), tmp_path, {"x": 1})
    script = f"import tunecore; tunecore.Tuner.restore({str(tmp_path / 'exp')!r})"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode != 0
    assert "with_parameters(" in done.stderr
    assert "trainable" in done.stderr


def test_with_parameters_refuses_what_is_not_a_trainable() -> None:
    with pytest.raises(ValueError, match="only works with function trainables"):
        tune.with_parameters(42, data=1)
    with pytest.raises(ValueError, match="only works with function trainables"):
        tune.with_resources(dict, {"cpu": 1})


def test_the_command_line_honours_default_resource_request(tmp_path: Path) -> None:
    options = ["--executor", "in_process", "--storage-path", str(tmp_path), "--name", "exp"]
    main(["run", f"{__name__}:SixtyFourCpus", *options, "--verbose", "0"])
    (trial,) = tune.replay(tmp_path / "exp", quiet=True).state.trials.values()
    assert trial.status is TrialStatus.ERROR
    assert "the trial requested 64 CPUs" in (trial.error_message or "")


def test_with_resources_on_a_function_is_still_a_function_named_after_it(
    tmp_path: Path,
) -> None:
    """Ray returns the function itself from `with_resources`: `ray.remote`
    takes it (Ray's walkthrough, doc_code/tune.py, does) and the experiment
    and its trials are named after the function."""
    asking = tune.with_resources(train, {"cpu": 1})
    assert inspect.isfunction(asking)
    assert asking.__name__ == "train"
    assert inspect.signature(asking) == inspect.signature(train)
    assert not hasattr(train, "_tunecore_resources")  # the user's function is untouched
    ray.remote(asking)  # a function to Ray (wrapping it starts no Ray)
    results = fit(asking, tmp_path, {"x": 2})
    assert results[0].metrics["score"] == 2
    assert Path(results[0].path).name.startswith("train_")


# -- Ray Train's ScalingConfig in with_resources --------------------------------


@pytest.mark.parametrize(
    ("scaling", "bundles"),
    [
        # Ray's defaults: a coordinator CPU beside the first worker's.
        (tune.ScalingConfig(), [{}, {"CPU": 2.0}]),
        (
            tune.ScalingConfig(
                trainer_resources={"CPU": 2, "GPU": 0.5, "hdd": 80},
                num_workers=2,
                resources_per_worker={"CPU": 1},
            ),
            [{}, {"CPU": 3.0, "GPU": 0.5, "hdd": 80.0}, {"CPU": 1.0}],
        ),
        (
            tune.ScalingConfig(num_workers=3, use_gpu=True),
            [{}, {"CPU": 1.0, "GPU": 1.0}, {"GPU": 1.0}, {"GPU": 1.0}],
        ),
    ],
)
def test_a_scaling_config_reserves_rays_placement_group(
    scaling: tune.ScalingConfig, bundles: list[dict[str, float]]
) -> None:
    factory = scaling.as_placement_group_factory()
    assert factory.bundles == bundles
    assert factory.head_bundle_is_empty


def test_a_trial_asking_with_a_scaling_config_runs_with_its_reservation(tmp_path: Path) -> None:
    trainable = tune.with_resources(train, tune.ScalingConfig(num_workers=1))
    results = fit(trainable, tmp_path, {"x": 3})
    assert results[0].metrics["score"] == 3
    [trial] = tune.replay(tmp_path / "exp", quiet=True).state.trials.values()
    expected = tune.ScalingConfig(num_workers=1).as_placement_group_factory().as_resources()
    assert trial.spec.resources == expected
    assert trial.spec.resources.bundles[1].cpu == 2.0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"use_gpu": False, "resources_per_worker": {"GPU": 1}}, "use_gpu is False"),
        ({"num_workers": -1}, "ScalingConfig.num_workers"),
        ({"num_workers": (4, 2)}, r"ScalingConfig.num_workers=\(4, 2\)"),
        ({"num_workers": (1, 2, 3)}, "ScalingConfig.num_workers"),
    ],
)
def test_a_scaling_config_that_cannot_be_reserved_says_why(
    arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        tune.ScalingConfig(**arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        {"accelerator_type": "A100"},
        {"num_workers": (1, 4)},
        {"use_tpu": True},
        {"label_selector": {"zone": "a"}},
        {"topology": "2x2"},
        {"elastic_resize_monitor_interval_s": 5.0},
    ],
)
def test_a_scaling_config_with_a_ray_train_field_reserves_nothing_for_a_trial(
    arguments: dict[str, Any],
) -> None:
    scaling = tune.ScalingConfig(**arguments)  # taken: a Ray Train trainer reads it
    [(name, value)] = arguments.items()
    with pytest.raises(TrainOnlyFieldError) as raised:
        tune.with_resources(train, scaling)
    assert f"ScalingConfig({name}={value!r})" in str(raised.value)


def test_ray_tunes_experiment_module_names_the_trial() -> None:
    from tunecore.experiment import Trial  # noqa: PLC0415 - the import is what is tested

    assert Trial is tune.Trial


def test_a_wrapped_trainables_default_experiment_name_is_what_it_wraps(tmp_path: Path) -> None:
    """Ray names the experiment of `with_parameters(train_with)` after
    `train_with`, as it names the trials."""
    run = RunConfig(storage_path=str(tmp_path), executor="in_process", verbose=0)
    trainable = tune.with_parameters(train_with, data="d")
    results = Tuner(trainable, param_space={"x": 1}, run_config=run).fit()
    assert re.fullmatch(
        r"train_with_\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}", Path(results.experiment_path).name
    )
