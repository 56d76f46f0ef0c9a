"""Ray Tune's deeper module paths: a script importing a name from one of
them runs once `ray.tune` is rewritten to `tunecore`, and gets the same
object the top-level name is."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import pytest

import tunecore

# Ray Tune module -> the names scripts and Ray's docs import from it, each
# with where Ray imports or documents it (paths in ray-project/ray).
_SPACE_FUNCTIONS = [
    "choice",
    "lograndint",
    "loguniform",
    "qlograndint",
    "qloguniform",
    "qrandint",
    "qrandn",
    "quniform",
    "randint",
    "randn",
    "sample_from",
    "uniform",
]
RAY_PATHS: dict[str, list[str]] = {
    # doc/source/tune/api/result_grid.rst
    "ray.tune.analysis": ["ExperimentAnalysis"],
    # doc/source/tune/api/callbacks.rst
    "ray.tune.callback": ["Callback"],
    # python/ray/tune/__init__.py (TuneContext, get_context)
    "ray.tune.context": ["TuneContext", "get_context"],
    # python/ray/tune/__init__.py (TuneError)
    "ray.tune.error": ["TuneError"],
    # doc/source/tune/api/trainable.rst
    "ray.tune.execution.placement_groups": ["PlacementGroupFactory"],
    # python/ray/tune/examples/*: `from ray.tune.experiment import Trial`;
    # python/ray/tune/tune.py (run_experiments docstring): Experiment
    "ray.tune.experiment": ["Experiment", "Trial"],
    # python/ray/tune/experiment/experiment.py
    "ray.tune.experiment.experiment": ["Experiment"],
    # doc/source/tune/api/reporters.rst, doc/source/tune/api/internals.rst
    "ray.tune.experiment.trial": ["Trial"],
    # doc/source/tune/api/logging.rst
    "ray.tune.logger": [
        "CSVLoggerCallback",
        "JsonLoggerCallback",
        "LoggerCallback",
        "TBXLoggerCallback",
        "pretty_print",
    ],
    # python/ray/tune/__init__.py, doc/source/tune/api/reporters.rst
    "ray.tune.progress_reporter": ["CLIReporter", "JupyterNotebookReporter", "ProgressReporter"],
    # doc/source/tune/api/internals.rst (register_trainable, register_env); RLlib scripts
    # register input readers through python/ray/tune/registry.py (register_input)
    "ray.tune.registry": [
        "get_trainable_cls",
        "register_env",
        "register_input",
        "register_trainable",
        "registry_contains_input",
        "registry_get_input",
    ],
    # doc/source/tune/api/result_grid.rst
    "ray.tune.result_grid": ["ResultGrid"],
    # python/ray/tune/examples/async_hyperband_example.py and the scheduler guides
    "ray.tune.schedulers.async_hyperband": ["ASHAScheduler", "AsyncHyperBandScheduler"],
    # python/ray/tune/examples/bohb_example.py
    "ray.tune.schedulers.hb_bohb": ["HyperBandForBOHB"],
    "ray.tune.schedulers.pbt": ["PopulationBasedTraining"],
    "ray.tune.schedulers.trial_scheduler": ["FIFOScheduler", "TrialScheduler"],
    # doc/source/tune/api/suggestion.rst
    "ray.tune.search.basic_variant": ["BasicVariantGenerator"],
    "ray.tune.search.concurrency_limiter": ["ConcurrencyLimiter"],
    # python/ray/tune/__init__.py (the space functions); user code checking a
    # space: `isinstance(value, Domain)`, `Float`, `Integer`, `Categorical`
    "ray.tune.search.sample": [
        "Categorical",
        "Domain",
        "Float",
        "Function",
        "Integer",
        *_SPACE_FUNCTIONS,
    ],
    "ray.tune.search.searcher": ["Searcher"],
    # python/ray/tune/__init__.py (SyncConfig)
    "ray.tune.syncer": ["SyncConfig"],
    "ray.tune.trainable": ["Trainable", "with_parameters"],
    # the modules Ray defines them in, which users' scripts import from
    # (`from ray.tune.trainable.trainable import Trainable`)
    "ray.tune.trainable.trainable": ["Trainable"],
    "ray.tune.trainable.util": ["with_parameters", "with_resources"],
    "ray.tune.analysis.experiment_analysis": ["ExperimentAnalysis"],
    # python/ray/tune/tune.py: `from ray.tune.tune import run_experiments`
    "ray.tune.tune": ["run", "run_experiments"],
    "ray.tune.tune_config": ["ResumeConfig", "TuneConfig"],
    # doc/source/tune/api/trainable.rst: `from ray.tune.tuner import Tuner`
    "ray.tune.tuner": ["Tuner"],
    # doc/source/tune/api/trainable.rst; python/ray/tune/examples/pbt_convnet_example.py
    "ray.tune.utils": [
        "deep_update",
        "flatten_dict",
        "merge_dicts",
        "unflatten_dict",
        "validate_save_restore",
    ],
    # python/ray/tune/examples/hyperband_example.py
    "ray.tune.utils.mock_trainable": ["MyTrainableClass"],
    # doc/source/tune/api/trainable.rst ("Tune Trainable Debugging Utilities")
    "ray.tune.utils.util": ["validate_warmstart"],
}

# Where the same name is also reachable as `tune.<name>`, it is that object.
TOP_LEVEL = {
    "CLIReporter",
    "Callback",
    "Experiment",
    "ExperimentAnalysis",
    "JupyterNotebookReporter",
    "PlacementGroupFactory",
    "ProgressReporter",
    "ResultGrid",
    "ResumeConfig",
    "SyncConfig",
    "Trainable",
    "Trial",
    "TuneConfig",
    "TuneContext",
    "TuneError",
    "Tuner",
    "get_context",
    "register_env",
    "register_trainable",
    "run",
    "run_experiments",
    "with_parameters",
    "with_resources",
    *_SPACE_FUNCTIONS,
}

# Each searcher's package and the module Ray defines the searcher in, which
# users' scripts import from (`from ray.tune.search.optuna.optuna_search
# import OptunaSearch`, found in public repositories).
SEARCHER_MODULES = {
    "ax": "AxSearch",
    "bayesopt": "BayesOptSearch",
    "bohb": "TuneBOHB",
    "hebo": "HEBOSearch",
    "hyperopt": "HyperOptSearch",
    "nevergrad": "NevergradSearch",
    "optuna": "OptunaSearch",
    "zoopt": "ZOOptSearch",
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


@pytest.mark.parametrize(("package", "name"), sorted(SEARCHER_MODULES.items()))
def test_a_searcher_imports_from_the_module_ray_defines_it_in(package: str, name: str) -> None:
    implementation = importlib.import_module(f"tunecore.search.{package}.{package}_search")
    searcher_package = importlib.import_module(f"tunecore.search.{package}")
    assert getattr(implementation, name) is getattr(searcher_package, name)
    assert implementation.UNDEFINED_SEARCH_SPACE is tunecore.search.UNDEFINED_SEARCH_SPACE


def test_rays_function_trainable_wrapper_is_left_out_saying_why() -> None:
    with pytest.raises(ImportError, match=r"pass the function itself to tunecore\.Tuner"):
        importlib.import_module("tunecore.trainable.function_trainable")
    with pytest.raises(ImportError, match="pass the function itself"):
        exec("from tunecore.trainable import wrap_function", {})


def test_register_trainable_and_get_trainable_cls_take_rays_keywords() -> None:
    from tunecore.registry import get_trainable_cls, register_trainable  # noqa: PLC0415
    from tunecore.utils.mock_trainable import MyTrainableClass  # noqa: PLC0415

    register_trainable(name="keywords_trainable", trainable=MyTrainableClass, warn=False)
    assert get_trainable_cls(trainable_name="keywords_trainable") is MyTrainableClass


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


def test_register_env_keeps_the_creator_and_refuses_what_cannot_create() -> None:
    from tunecore.registry import get_env_creator, register_env  # noqa: PLC0415

    def make_env(env_config: dict[str, object]) -> str:
        return f"env with {env_config}"

    tunecore.register_env("paths_test_env", make_env)
    assert get_env_creator("paths_test_env") is make_env
    with pytest.raises(TypeError, match="the creator must be callable"):
        register_env("paths_test_env", "not a function")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown environment 'never_registered'"):
        get_env_creator("never_registered")


def test_register_input_keeps_rllibs_input_creator_as_ray_does() -> None:
    from tunecore.registry import (  # noqa: PLC0415
        register_input,
        registry_contains_input,
        registry_get_input,
    )

    def make_reader(ioctx: object) -> str:
        return f"reader for {ioctx}"

    assert not registry_contains_input("paths_test_input")
    register_input("paths_test_input", make_reader)
    assert registry_contains_input("paths_test_input")
    assert registry_get_input("paths_test_input") is make_reader
    with pytest.raises(TypeError, match=r"register_input\('paths_test_input', 3\)"):
        register_input("paths_test_input", 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown input 'never_registered'"):
        registry_get_input("never_registered")


def test_rays_domain_types_check_tunecores_domains_by_kind() -> None:
    from tunecore.search import sample  # noqa: PLC0415

    floats = [
        tunecore.uniform(0, 1),
        tunecore.quniform(0, 1, 0.1),
        tunecore.loguniform(1e-4, 1e-1),
        tunecore.qloguniform(1e-4, 1e-1, 1e-5),
        tunecore.randn(0, 1),
        tunecore.qrandn(0, 1, 0.5),
    ]
    integers = [
        tunecore.randint(0, 10),
        tunecore.qrandint(0, 10, 2),
        tunecore.lograndint(1, 100),
        tunecore.qlograndint(1, 100, 2),
    ]
    kinds: dict[type, Sequence[object]] = {
        sample.Float: floats,
        sample.Integer: integers,
        sample.Categorical: [tunecore.choice([1, 2])],
        sample.Function: [tunecore.sample_from(lambda spec: 1)],
    }
    for kind, domains in kinds.items():
        for domain in domains:
            assert isinstance(domain, sample.Domain)
            assert [k for k in kinds if isinstance(domain, k)] == [kind]
    # Constants and grids are not domains, as in Ray (its grid is a dict).
    for value in (0.5, "adam", {"a": 1}, tunecore.grid_search([1, 2])):
        assert not isinstance(value, sample.Domain)
    assert issubclass(type(tunecore.uniform(0, 1)), sample.Float)
    # Built by hand as in Ray, a domain stands for the one its function returns.
    assert sample.Float(0, 1).uniform().to_domain() == tunecore.uniform(0, 1)


def test_validate_warmstart_checks_points_and_rewards_as_ray_does() -> None:
    from tunecore.utils.util import validate_warmstart  # noqa: PLC0415

    validate_warmstart(["a", "b"], [{"a": 1, "b": 2}, [3, 4]], [0.5, 0.7])
    validate_warmstart(["a", "b"], [{"a": 1}], None, validate_point_name_lengths=False)
    validate_warmstart(["a"], None, [1.0])  # rewards without points: nothing to check
    with pytest.raises(TypeError, match=r"points_to_evaluate=\(1,\) must be a list"):
        validate_warmstart(["a"], (1,), None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="points_to_evaluate holds 3: each point"):
        validate_warmstart(["a"], [3], None)  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"holds \{'a': 1\} with 1 values; parameter_names"):
        validate_warmstart(["a", "b"], [{"a": 1}], None)
    with pytest.raises(ValueError, match="evaluated_rewards has 1 values for 2 points"):
        validate_warmstart(["a"], [[1], [2]], [0.5])
    with pytest.raises(TypeError, match=r"evaluated_rewards=\(0.5,\) must be a list"):
        validate_warmstart(["a"], [[1]], (0.5,))  # type: ignore[arg-type]


def test_checkpoint_imports_from_the_private_module_ray_defines_it_in() -> None:
    """Ray's fault-tolerance guide: `from ray.train._checkpoint import Checkpoint`."""
    from tunecore._checkpoint import Checkpoint  # noqa: PLC0415

    assert Checkpoint is tunecore.Checkpoint
