"""Ray names tunecore deliberately does not provide, and what to use instead.

A Ray Tune script whose imports are rewritten (`ray.tune.X`, `ray.train.X`
and `ray.air.X` -> `tunecore.X`) may name a part of Ray that tunecore has
no counterpart for: Ray Train's trainers (which a script imports from Ray
itself, reporting to its trial through tunecore.integration.ray_train),
RLlib, Ray's per-trial file loggers. Importing one is an ImportError that says why and names what
tunecore offers, instead of a bare "No module named" or "cannot import
name". docs/ray-catalogue.md lists them all with the rest of Ray's names.

`NOT_PROVIDED` maps the rewritten dotted name (a module, or a module's
attribute) to that explanation. A module's entry also covers everything
under it (`tunecore.torch` covers `tunecore.torch.TorchTrainer`).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

_TRAINERS = (
    "Ray Train's trainers (TorchTrainer, TensorflowTrainer, XGBoostTrainer, LightningTrainer, "
    "TransformersTrainer, DataParallelTrainer) run distributed training on Ray Train, which "
    "tunecore does not include: import them from Ray itself (`import ray.train.torch`, "
    "`ray.train.ScalingConfig`, `ray.train.RunConfig`). To tune a Ray Train run, build the "
    "trainer inside a function trainable with "
    "`ray.train.RunConfig(callbacks=[tunecore.integration.ray_train.TuneReportCallback()])` "
    "and call `trainer.fit()`, as Ray 2.60's docs do. Or tune the training loop itself: a "
    "function trainable `def train_fn(config): ... tunecore.report({...})`, given its "
    "resources with tunecore.with_resources(train_fn, {'cpu': 4, 'gpu': 1}) or a "
    "tunecore.ScalingConfig; the boosting libraries' callbacks are in tunecore.integration "
    "(xgboost, lightgbm)."
)
_TRAIN_WORKERS = (
    "is a Ray Train worker-group call (one process of several training one model); tunecore runs "
    "one process per trial: the trial's config is `config`, its data comes in through "
    "tunecore.with_parameters(trainable, data=...), and tunecore.get_context() names the trial."
)
_FILE_LOGGERS = (
    "is one of Ray Tune's per-trial Logger classes, which Ray removed (Ray Tune 2.60 has none); "
    "tunecore writes result.json, progress.csv and TensorBoard files through its callbacks "
    "(on by default: tunecore.logger.JsonLoggerCallback, CSVLoggerCallback, TBXLoggerCallback), "
    "and a logger of your own is a tunecore.logger.LoggerCallback subclass overriding "
    "log_trial_start / log_trial_result / log_trial_end, passed in RunConfig(callbacks=[...])."
)
NOT_PROVIDED: dict[str, str] = {
    **{
        f"tunecore.{module}": f"ray.train.{module} is part of Ray Train. {_TRAINERS}"
        for module in (
            "torch",
            "tensorflow",
            "huggingface",
            "lightning",
            "horovod",
            "data_parallel_trainer",
            "base_trainer",
            "trainer",
            "v2",
            "backend",
            "gbdt_trainer",
        )
    },
    **{
        f"tunecore.{name}": f"ray.train.{name} {_TRAIN_WORKERS}"
        for name in (
            "get_dataset_shard",
            "DataConfig",
            "BackendConfig",
            "TrainingIterator",
            "get_world_rank",
            "get_world_size",
            "get_local_rank",
            "get_local_world_size",
            "get_node_rank",
        )
    },
    **{
        f"tunecore.{name}": f"ray.train's {name} is part of Ray Train. {_TRAINERS}"
        for name in (
            "TorchTrainer",
            "TensorflowTrainer",
            "DataParallelTrainer",
            "BaseTrainer",
            "XGBoostTrainer",
            "LightGBMTrainer",
        )
    },
    **{
        f"tunecore.logger.{name}": f"ray.tune.logger.{name} {_FILE_LOGGERS}"
        for name in (
            "Logger",
            "LegacyLoggerCallback",
            "NoopLogger",
            "JsonLogger",
            "CSVLogger",
            "TBXLogger",
            "UnifiedLogger",
            "DEFAULT_LOGGERS",
        )
    },
    "tunecore.logger.unified": f"ray.tune.logger.unified.UnifiedLogger {_FILE_LOGGERS}",
    "tunecore.logger.noop": f"ray.tune.logger.noop.NoopLogger {_FILE_LOGGERS}",
    **{
        f"tunecore.{module}": (
            f"ray.train.{module}'s trainer is part of Ray Train. {_TRAINERS} Its report callbacks "
            f"for Tune are tunecore.integration.{module}.TuneReportCheckpointCallback."
        )
        for module in ("xgboost", "lightgbm")
    },
    **{
        f"tunecore.{name}": f"ray.train.{name} belongs to Ray Train's trainers. {_TRAINERS}"
        for name in (
            "ControllerError",
            "NCCLHangError",
            "PreemptionError",
            "PreemptionInfo",
            "get_preemption_info",
            "ReportedCheckpoint",
            "ReportedCheckpointStatus",
            "get_all_reported_checkpoints",
            "CheckpointUploadMode",
            "CheckpointConsistencyMode",
            "UserCallback",
            "ValidationConfig",
            "ValidationFn",
            "ValidationTaskConfig",
            "WorkerGroupError",
            "TrainingFailedError",
            "LoggingConfig",
            "TRAIN_DATASET_KEY",
            "DatasetConfig",
        )
    },
    **{
        f"tunecore.{name}": (
            f"ray.air.{name} is part of Ray's resource and data layer (ray.air.execution, "
            "ray.data), not of the tuning API; tunecore schedules trials on Ray itself. Give a "
            "trial its resources with tunecore.with_resources or a tunecore.PlacementGroupFactory."
        )
        for name in ("AcquiredResources", "ResourceRequest", "DataBatchType", "execution")
    },
    "tunecore.examples": (
        "this module of ray.tune.examples is a script to run, or trains a Lightning, "
        "Transformers, Keras or TensorFlow model on a data set it downloads (mnist_ptl_mini, "
        "mlflow_ptl, pbt_transformers, pbt_memnn_example, tune_mnist_keras, ...); tunecore "
        "provides the helper modules scripts import: tunecore.examples.pbt_function, and with "
        "the torchvision extra (pip install 'tunecore[torchvision]') mnist_pytorch, "
        "mnist_pytorch_trainable, cifar10_pytorch and pbt_dcgan_mnist.common. Copy the model "
        "and data loaders the example defines into your script."
    ),
    "tunecore.integrations.trackio": (
        "ray.air.integrations.trackio (TrackioLoggerCallback, setup_trackio) is not provided; "
        "log to Trackio from a tunecore.logger.LoggerCallback of your own, or call trackio "
        "inside the trainable with the trial's name from tunecore.get_context()."
    ),
    **{
        f"tunecore.{module}": (
            f"ray.air.{module} / ray.train.{module} hold Ray's internal constants and data "
            "types, not part of the tuning API; tunecore's result keys are in tunecore.result."
        )
        for module in ("constants", "data_batch_type")
    },
    "tunecore.utils.mock.FailureInjectorCallback": (
        "ray.tune.utils.mock.FailureInjectorCallback kills cluster nodes through Ray's private "
        "autoscaler commands for Ray's own release tests; inject failures in the trainable "
        "(raise, or os._exit) or stop a node of your cluster yourself (`ray stop` on it), and "
        "tunecore retries the trials as FailureConfig(max_failures=...) says."
    ),
    "tunecore.error.SessionMisuseError": (
        "ray.train.error.SessionMisuseError is Ray Train's; tunecore.report and "
        "get_checkpoint outside any trial warn and return None, as Ray Tune's do; "
        "get_context outside a trial raises RuntimeError saying so."
    ),
    "tunecore.rllib": (
        "RLlib is Ray's reinforcement-learning library, not part of tunecore. Tune an RL "
        "training loop as a function trainable that reports each iteration with "
        "tunecore.report({...})."
    ),
    "tunecore.sklearn": (
        "ray.tune.sklearn (TuneSearchCV, TuneGridSearchCV) moved out of Ray to the "
        "tune-sklearn package; tunecore does not provide it. Score a scikit-learn model inside "
        "a function trainable (cross_val_score) and report the score with tunecore.report."
    ),
    "tunecore.automl": (
        "ray.tune.automl (GeneticSearch) was removed from Ray; use a search algorithm from "
        "tunecore.search (BasicVariantGenerator, OptunaSearch, HyperOptSearch, ...)."
    ),
    "tunecore.suggest": (
        "ray.tune.suggest was renamed ray.tune.search in Ray 2.0: import the searchers from "
        "tunecore.search (tunecore.search.optuna.OptunaSearch, ...)."
    ),
    "tunecore.search.SearchAlgorithm": (
        "ray.tune.search.SearchAlgorithm is the engine-side interface of Ray's trial runner, "
        "which tunecore replaces; write a search algorithm of your own as a "
        "tunecore.search.Searcher subclass (suggest, on_trial_complete)."
    ),
    **{
        f"tunecore.search.variant_generator.{name}": (
            f"ray.tune.search.variant_generator.{name} reads Ray's own domain objects, which "
            "tunecore's search domains are not; list a space's configs with "
            "tunecore.search.variant_generator.generate_variants(space), or write a searcher "
            "of your own as a tunecore.search.Searcher subclass, which gets the resolved "
            "space in set_search_properties."
        )
        for name in ("format_vars", "RecursiveDependencyError")
    },
    "tunecore.search.SearchGenerator": (
        "ray.tune.search.SearchGenerator wraps a Searcher for Ray's trial runner; tunecore "
        "takes the Searcher itself in TuneConfig(search_alg=...)."
    ),
    "tunecore.search.search_generator": (
        "ray.tune.search.search_generator wraps a Searcher for Ray's trial runner; tunecore "
        "takes the Searcher itself in TuneConfig(search_alg=...)."
    ),
    "tunecore.search.search_algorithm": (
        "ray.tune.search.search_algorithm is the engine-side interface of Ray's trial runner; "
        "write a tunecore.search.Searcher subclass instead."
    ),
    **{
        f"tunecore.trainable.{name}": (
            f"ray.tune.trainable's {name} wraps a function into Ray's Trainable class for its "
            "trial runner; tunecore runs a function trainable as it is: pass the function "
            "itself to tunecore.Tuner (or tunecore.with_parameters / with_resources)."
        )
        for name in ("function_trainable", "FunctionTrainable", "wrap_function")
    },
    "tunecore.impl": (
        "ray.tune.impl holds Ray Tune's internals (TunerInternal), which tunecore replaces; use "
        "tunecore.Tuner."
    ),
    "tunecore.execution.tune_controller": (
        "ray.tune.execution.tune_controller is Ray Tune's trial runner, which tunecore "
        "replaces; run experiments with tunecore.Tuner or tunecore.run."
    ),
    "tunecore.result.EXPR_PARAM_PICKLE_FILE": (
        "ray.tune.result.EXPR_PARAM_PICKLE_FILE names Ray's params.pkl; tunecore persists no "
        "pickles: a trial's parameters are in params.json (tunecore.result.EXPR_PARAM_FILE)."
    ),
}


class NotProvidedError(ImportError):
    """A Ray name tunecore deliberately does not provide; the message says
    what to use instead."""


def explanation(dotted: str) -> str | None:
    """Why `dotted` (or the module holding it) is not provided, if it is
    one of those names."""
    parts = dotted.split(".")
    for end in range(len(parts), 1, -1):
        reason = NOT_PROVIDED.get(".".join(parts[:end]))
        if reason is not None:
            return reason
    return None


def not_provided_getattr(module: str) -> Callable[[str], object]:
    """A module `__getattr__` for names the module does not have: an
    ImportError saying why for a name tunecore deliberately leaves out
    (one `from module import name` shows as it is), else the usual
    AttributeError."""

    def __getattr__(name: str) -> object:
        reason = explanation(f"{module}.{name}")
        if reason is not None and not name.startswith("__"):
            raise NotProvidedError(f"tunecore does not provide {module}.{name}: {reason}")
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


class _NotProvidedFinder(importlib.abc.MetaPathFinder):
    """Consulted after the real finders: a `tunecore...` module that does not
    exist but is one of Ray's modules left out fails with the explanation."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("tunecore."):
            return None
        reason = explanation(fullname)
        if reason is None:
            return None
        raise NotProvidedError(f"tunecore does not provide {fullname}: {reason}", name=fullname)


def install_finder() -> None:
    """Add the finder once, last, so it only sees modules nothing else found."""
    if not any(isinstance(finder, _NotProvidedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_NotProvidedFinder())
