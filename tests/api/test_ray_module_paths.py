"""Ray Tune's deeper module paths: a script importing a name from one of
them runs once `ray.tune` is rewritten to `tunecore`, and gets the same
object the top-level name is."""

from __future__ import annotations

import importlib

import pytest

import tunecore

# Ray Tune module -> the names scripts and Ray's docs import from it.
RAY_PATHS: dict[str, list[str]] = {
    "ray.tune.analysis": ["ExperimentAnalysis"],
    "ray.tune.callback": ["Callback"],
    "ray.tune.execution.placement_groups": ["PlacementGroupFactory"],
    "ray.tune.experiment": ["Trial"],
    "ray.tune.logger": [
        "CSVLoggerCallback",
        "JsonLoggerCallback",
        "LoggerCallback",
        "TBXLoggerCallback",
        "pretty_print",
    ],
    "ray.tune.registry": ["get_trainable_cls", "register_trainable"],
    "ray.tune.result_grid": ["ResultGrid"],
    "ray.tune.schedulers.async_hyperband": ["ASHAScheduler", "AsyncHyperBandScheduler"],
    "ray.tune.schedulers.hb_bohb": ["HyperBandForBOHB"],
    "ray.tune.schedulers.pbt": ["PopulationBasedTraining"],
    "ray.tune.schedulers.trial_scheduler": ["FIFOScheduler", "TrialScheduler"],
    "ray.tune.search.basic_variant": ["BasicVariantGenerator"],
    "ray.tune.search.concurrency_limiter": ["ConcurrencyLimiter"],
    "ray.tune.search.searcher": ["Searcher"],
    "ray.tune.trainable": ["Trainable", "with_parameters"],
    "ray.tune.tune_config": ["ResumeConfig", "TuneConfig"],
    "ray.tune.utils": [
        "deep_update",
        "flatten_dict",
        "merge_dicts",
        "unflatten_dict",
        "validate_save_restore",
    ],
    "ray.tune.utils.mock_trainable": ["MyTrainableClass"],
}

# Where the same name is also reachable as `tune.<name>`, it is that object.
TOP_LEVEL = {
    "Callback",
    "ExperimentAnalysis",
    "PlacementGroupFactory",
    "ResultGrid",
    "ResumeConfig",
    "Trainable",
    "Trial",
    "TuneConfig",
    "register_trainable",
    "with_parameters",
}


@pytest.mark.parametrize(
    ("ray_path", "name"),
    [(path, name) for path, names in RAY_PATHS.items() for name in names],
)
def test_a_name_imported_from_rays_module_path_is_there(ray_path: str, name: str) -> None:
    module = importlib.import_module(ray_path.replace("ray.tune", "tunecore", 1))
    value = getattr(module, name)
    if name in TOP_LEVEL:
        assert value is getattr(tunecore, name)


def test_get_trainable_cls_finds_what_was_registered() -> None:
    from tunecore.registry import get_trainable_cls, register_trainable  # noqa: PLC0415
    from tunecore.utils.mock_trainable import MyTrainableClass  # noqa: PLC0415

    register_trainable("paths_test_trainable", MyTrainableClass)
    assert get_trainable_cls("paths_test_trainable") is MyTrainableClass
    with pytest.raises(ValueError, match="unknown trainable 'never_registered'"):
        get_trainable_cls("never_registered")


def test_pretty_print_shows_a_result_as_block_yaml() -> None:
    from tunecore.logger import pretty_print  # noqa: PLC0415

    class Scalar:  # what numpy's scalars look like to the conversion
        def item(self) -> float:
            return 0.25

    text = pretty_print(
        {
            "loss": Scalar(),
            "config": {"lr": 0.1},
            "hist_stats": [1, 2],
            "skipped": None,
            "info": {"b": 2, "a": [1, 2]},
            "trial_id": "abc",
        },
        exclude={"trial_id"},
    )
    assert text == "info:\n  a:\n  - 1\n  - 2\n  b: 2\nloss: 0.25\n"
