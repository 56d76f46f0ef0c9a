"""Ray names tunecore deliberately does not provide, and what to use instead.

A Ray Tune script whose imports are rewritten (`ray.tune.X`, `ray.train.X`
and `ray.air.X` -> `tunecore.X`) may name a part of Ray that tunecore has
no counterpart for: Ray Train's names outside its trainer modules (which
tunecore passes through, see tunecore._ray_train_modules), RLlib, Ray's
per-trial file loggers. Importing one is an ImportError that says why and
names what tunecore offers, instead of a bare "No module named" or "cannot import
name". docs/ray-catalogue.md lists them all with the rest of Ray's names.

`NOT_PROVIDED` maps the rewritten dotted name (a module, or a module's
attribute) to that explanation. A module's entry also covers everything
under it (`tunecore.rllib` covers `tunecore.rllib.algorithms`).
"""

from __future__ import annotations

from collections.abc import Callable

from tunecore import _finder as finder

_TRAINERS = (
    "Ray Train's trainers are Ray Train's own, which tunecore passes through under the "
    "rewritten names of their modules: `tunecore.torch.TorchTrainer` is "
    "`ray.train.torch.TorchTrainer` (likewise tunecore.lightning, .huggingface, .tensorflow, "
    ".xgboost, .lightgbm, .horovod, .v2, .data_parallel_trainer), taking tunecore's "
    "ScalingConfig and RunConfig. To tune a Ray Train run, build the trainer inside a function "
    "trainable with `RunConfig(callbacks=[tunecore.integration.ray_train.TuneReportCallback()])` "
    "and call `trainer.fit()`, as Ray 2.60's docs do. Or tune the training loop itself: a "
    "function trainable `def train_fn(config): ... tunecore.report({...})`, given its "
    "resources with tunecore.with_resources(train_fn, {'cpu': 4, 'gpu': 1}) or a "
    "tunecore.ScalingConfig; the boosting libraries' callbacks are in tunecore.integration "
    "(xgboost, lightgbm)."
)
_TRAIN_WORKERS = (
    "is an old Ray Train worker-group call, which Ray 2.60 no longer has: in a Ray Train worker, "
    "tunecore.get_context() is Ray Train's TrainContext (get_world_rank(), get_world_size(), "
    "get_local_rank(), get_local_world_size(), get_node_rank()) and "
    "tunecore.get_dataset_shard(name) is Ray Train's. A tunecore trial is one process: its "
    "config is `config`, its data comes in through tunecore.with_parameters(trainable, "
    "data=...), and tunecore.get_context() names the trial."
)
_FILE_LOGGERS = (
    "is one of Ray Tune's per-trial Logger classes, which Ray removed (Ray Tune 2.60 has none); "
    "tunecore writes result.json, progress.csv and TensorBoard files through its callbacks "
    "(on by default: tunecore.logger.JsonLoggerCallback, CSVLoggerCallback, TBXLoggerCallback), "
    "and a logger of your own is a tunecore.logger.LoggerCallback subclass overriding "
    "log_trial_start / log_trial_result / log_trial_end, passed in RunConfig(callbacks=[...])."
)
_RAY_INTERNAL_CONSTANTS = (
    # ray.air.constants
    "PREPROCESSOR_KEY",
    "MODEL_KEY",
    "EVALUATION_DATASET_KEY",
    "TRAIN_DATASET_KEY",
    "TENSOR_COLUMN_NAME",
    "MAX_REPR_LENGTH",
    "SESSION_MISUSE_LOG_ONCE_KEY",
    "CHECKPOINT_ID_ATTR",
    "LAZY_CHECKPOINT_MARKER_FILE",
    "CHECKPOINT_TUNE_METADATA_FILE",
    "COPY_DIRECTORY_CHECKPOINTS_INSTEAD_OF_MOVING_ENV",
    "AIR_ENV_VARS",
    # ray.train.constants
    "WORKER_HOSTNAME",
    "WORKER_NODE_IP",
    "WORKER_PID",
    "DETAILED_AUTOFILLED_KEYS",
    "RESULT_FILE_JSON",
    "TRAIN_CHECKPOINT_SUBDIR",
    "TUNE_CHECKPOINT_ID",
    "ENABLE_V2_MIGRATION_WARNINGS_ENV_VAR",
    "V2_MIGRATION_GUIDE_LINK_MESSAGE",
    "V2_MIGRATION_GUIDE_MESSAGE",
    "ENABLE_DETAILED_AUTOFILLED_METRICS_ENV",
    "ENABLE_SHARE_CUDA_VISIBLE_DEVICES_ENV",
    "ENABLE_SHARE_HIP_VISIBLE_DEVICES_ENV",
    "ENABLE_SHARE_NEURON_CORES_ACCELERATOR_ENV",
    "ENABLE_SHARE_NPU_RT_VISIBLE_DEVICES_ENV",
    "TRAIN_PLACEMENT_GROUP_TIMEOUT_S_ENV",
    "TRAIN_ENABLE_WORKER_SPREAD_ENV",
    "RAY_TRAIN_COUNT_PREEMPTION_AS_FAILURE",
    "RAY_TRAIN_ENABLE_STATE_TRACKING",
    "TUNE_ONLY_STORE_CHECKPOINT_SCORE_ATTRIBUTE",
    "TORCH_PROCESS_GROUP_SHUTDOWN_TIMEOUT_S",
    "DEFAULT_TORCH_PROCESS_GROUP_SHUTDOWN_TIMEOUT_S",
    "JAX_DISTRIBUTED_SHUTDOWN_TIMEOUT_S",
    "DEFAULT_JAX_DISTRIBUTED_SHUTDOWN_TIMEOUT_S",
    "TRAIN_ENV_VARS",
    "CHECKPOINT_METADATA_KEY",
    "CHECKPOINT_RANK_KEY",
    # ray.tune.constants
    "RAY_TUNE_CALLBACKS_ENV_VAR",
    "TUNE_ENV_VARS",
)
"""The public names of Ray 2.60's `ray.air.constants`, `ray.train.constants`
and `ray.tune.constants` (all three rewrite to `tunecore.constants`) that
belong to Ray's own machinery."""
NOT_PROVIDED: dict[str, str] = {
    **{
        f"tunecore.{module}": f"ray.train.{module} is part of Ray Train. {_TRAINERS}"
        for module in ("gbdt_trainer",)
    },
    **{
        f"tunecore.{name}": f"ray.train.{name} {_TRAIN_WORKERS}"
        for name in (
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
    "tunecore.DatasetConfig": (
        "ray.train.DatasetConfig was Ray Train's per-dataset ingest config, which Ray replaced "
        "with ray.train.DataConfig: tunecore.DataConfig is Ray Train's, given to a trainer's "
        "dataset_config."
    ),
    **{
        f"tunecore.{name}": (
            f"ray.air.{name} is part of Ray's resource and data layer (ray.air.execution, "
            "ray.data), not of the tuning API; tunecore schedules trials on Ray itself. Give a "
            "trial its resources with tunecore.with_resources or a tunecore.PlacementGroupFactory."
        )
        for name in ("AcquiredResources", "ResourceRequest", "execution")
    },
    "tunecore.examples": (
        "this module of ray.tune.examples is a script to run, or trains a Lightning, "
        "Transformers, Keras or TensorFlow model on a data set it downloads (mnist_ptl_mini, "
        "mlflow_ptl, pbt_transformers, pbt_memnn_example, tune_mnist_keras, ...); tunecore "
        "provides the helper modules scripts import: tunecore.examples.pbt_function, and with "
        "the torchvision extra (pip install 'tunecore[torchvision]') mnist_pytorch, "
        "mnist_pytorch_trainable, cifar10_pytorch and pbt_dcgan_mnist.common, and Ray Train's "
        "example packages (ray.train.examples.pytorch, .tf, .horovod, .pytorch_geometric) "
        "pass through as tunecore.examples.pytorch & co. Copy the model and data loaders the "
        "example defines into your script."
    ),
    "tunecore.integrations.trackio": (
        "ray.air.integrations.trackio (TrackioLoggerCallback, setup_trackio) is not provided; "
        "log to Trackio from a tunecore.logger.LoggerCallback of your own, or call trackio "
        "inside the trainable with the trial's name from tunecore.get_context()."
    ),
    "tunecore.data_batch_type": (
        "ray.air.data_batch_type / ray.train.data_batch_type hold Ray Data's batch types, not "
        "part of the tuning API."
    ),
    **{
        f"tunecore.constants.{name}": (
            f"{name} is one of Ray's internal constants (Ray Train's data keys, timeouts, "
            "environment variables, markers of its own files); tunecore.constants has the "
            "result keys and file names scripts read (TRAINING_ITERATION, TIMESTAMP, "
            "TIME_THIS_ITER_S, EXPR_RESULT_FILE, EXPR_PROGRESS_FILE, EXPR_PARAM_FILE, "
            "EXPR_ERROR_FILE), DEFAULT_STORAGE_PATH and RAY_CHDIR_TO_TRIAL_DIR; every result "
            "key is in tunecore.result."
        )
        for name in _RAY_INTERNAL_CONSTANTS
    },
    **{
        f"tunecore.constants.{name}": (
            f"ray.air.constants.{name} names Ray's {file}; tunecore persists no pickles: "
            f"a trial's {what} is in {replacement} (tunecore.constants.{constant})."
        )
        for name, file, what, replacement, constant in (
            ("EXPR_PARAM_PICKLE_FILE", "params.pkl", "config", "params.json", "EXPR_PARAM_FILE"),
            ("EXPR_ERROR_PICKLE_FILE", "error.pkl", "error", "error.txt", "EXPR_ERROR_FILE"),
        )
    },
    "tunecore.constants.TIME_TOTAL_S": (
        "ray.train.constants.TIME_TOTAL_S is Ray Train's worker key '_time_total_s', which a "
        "Tune result does not carry; a trial's total time is tunecore.result.TIME_TOTAL_S "
        "('time_total_s'), as ray.tune.result.TIME_TOTAL_S is."
    ),
    "tunecore.constants.CHECKPOINT_DIR_NAME": (
        "ray.train.constants.CHECKPOINT_DIR_NAME is the result key where Ray names the "
        "directory of the checkpoint a result saved; tunecore's results do not carry it: the "
        "checkpoints are Result.checkpoint and Result.best_checkpoints (and trial.checkpoint "
        "in a callback)."
    ),
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
    **{
        f"tunecore.search.{module}": (
            f"ray.tune.search.{module} ({searcher}) is gone from Ray Tune (2.60 has no such "
            "module either); use a searcher tunecore.search has (OptunaSearch, HyperOptSearch, "
            "BayesOptSearch, AxSearch, HEBOSearch, NevergradSearch, ZOOptSearch, TuneBOHB), or "
            f"drive {library} from a tunecore.search.Searcher subclass of your own "
            "(suggest, on_trial_complete)."
        )
        for module, searcher, library in (
            ("dragonfly", "DragonflySearch", "Dragonfly's ask/tell optimizer"),
            ("flaml", "BlendSearch, CFO", "FLAML"),
            ("sigopt", "SigOptSearch", "the SigOpt service"),
            ("skopt", "SkOptSearch", "scikit-optimize's Optimizer (ask/tell)"),
        )
    },
    "tunecore.integration.mxnet": (
        "ray.tune.integration.mxnet (TuneReportCallback, TuneCheckpointCallback) is gone from "
        "Ray Tune with MXNet itself (2.60 has no such module either); report from the training "
        "loop with tunecore.report({...}), passing a tunecore.Checkpoint to save one."
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
        for name in ("RecursiveDependencyError", "_count_variants", "_get_value")
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
    **{
        f"tunecore.experimental.output.{name}": (
            f"ray.tune.experimental.output.{name} is part of the engine of Ray's console "
            "output; tunecore prints its own. To change what a run prints, pass a "
            "tunecore.ProgressReporter subclass (or CLIReporter(metric_columns=..., "
            "parameter_columns=...)) as RunConfig(progress_reporter=...), or print from a "
            "tunecore.Callback's on_trial_result; RunConfig(verbose=...) sets how much."
        )
        for name in (
            "TuneReporterBase",
            "TuneTerminalReporter",
            "ProgressReporter",
            "_get_time_str",
        )
    },
    "tunecore.utils.file_transfer": (
        "ray.tune.utils.file_transfer copies directories between Ray nodes through Ray tasks; "
        "it needs none of Ray Tune's engine, so import it from Ray itself beside tunecore "
        "(`from ray.tune.utils.file_transfer import sync_dir_between_nodes`). tunecore moves "
        "a trial's files through its storage: RunConfig(storage_path=...) on a shared or "
        "cloud file system."
    ),
    "tunecore.search.repeater._TrialGroup": (
        "ray.tune.search.repeater._TrialGroup is private to Ray's Repeater; tunecore's "
        "Repeater keeps its groups in immutable core state. Repeated trials carry their index "
        "in the config under tunecore.search.repeater.TRIAL_INDEX, and the Repeater reports "
        "each group's mean to the searcher it wraps."
    ),
    **{
        f"tunecore.integration.{name}": (
            f"ray.tune.integration.{name} moved to ray.air.integrations.{name} in Ray 2.0 "
            f"(Ray 2.60 has no ray.tune.integration.{name}): import it from "
            f"tunecore.integrations.{name}."
        )
        for name in ("wandb", "mlflow", "comet")
    },
    "tunecore.checkpoint": (
        "ray.air.checkpoint was removed from Ray (Ray 2.60 has none): the checkpoint class is "
        "tunecore.Checkpoint (Checkpoint.from_directory(path), checkpoint.as_directory()), as "
        "Ray's is ray.tune.Checkpoint."
    ),
    "tunecore.utils.placement_groups": (
        "ray.tune.utils.placement_groups moved to ray.tune.execution.placement_groups (Ray 2.60 "
        "has no ray.tune.utils.placement_groups): import PlacementGroupFactory from tunecore "
        "(or tunecore.execution.placement_groups)."
    ),
    "tunecore.schedulers.resource_changing_scheduler.evenly_distribute_cpus_gpus": (
        "ray.tune.schedulers.resource_changing_scheduler.evenly_distribute_cpus_gpus was "
        "replaced by the class DistributeResources (Ray 2.60 has no such function): pass "
        "resources_allocation_function=DistributeResources() (its default) to "
        "ResourceChangingScheduler."
    ),
    **{
        f"tunecore.{where}Analysis": (
            f"ray.tune.{where}Analysis was renamed ExperimentAnalysis (Ray 2.60 has no Analysis): "
            "use tunecore.ExperimentAnalysis(path) (its trial_dataframes is the old "
            "fetch_trial_dataframes())."
        )
        for where in ("", "analysis.")
    },
    **{
        f"tunecore.syncer.{name}": (
            f"ray.tune.syncer.{name} was removed from Ray with its syncing by command "
            f"(Ray 2.60 has no ray.tune.syncer.{name}): trials write to "
            "RunConfig(storage_path=...) directly; for storage of your own, pass a "
            "pyarrow.fs.FileSystem as RunConfig(storage_filesystem=...)."
        )
        for name in ("Syncer", "SyncerCallback", "_DefaultSyncer", "_BackgroundSyncer")
    },
    "tunecore.callbacks": (
        "ray.air.callbacks moved to ray.air.integrations in Ray 2.0 (Ray 2.60 has no "
        "ray.air.callbacks): import the callback from tunecore.integrations (for instance "
        "tunecore.integrations.comet.CometLoggerCallback)."
    ),
    "tunecore.impl": (
        "ray.tune.impl holds Ray Tune's internals (TunerInternal), which tunecore replaces; use "
        "tunecore.Tuner (its run configuration classes are in tunecore.impl.config, as "
        "RunConfig, CheckpointConfig and FailureConfig are in ray.tune.impl.config)."
    ),
    **{
        f"tunecore.schedulers.pbt.{name}": (
            f"ray.tune.schedulers.pbt.{name} is private to Ray's PopulationBasedTraining, which "
            "keeps each trial's state in a mutable _PBTTrialState and checkpoints it through its "
            "trial runner; tunecore's PopulationBasedTraining is a pure scheduler of immutable "
            "state with no such object. Shape its decisions through its arguments "
            "(hyperparam_mutations, custom_explore_fn, quantile_fraction, resample_probability, "
            "perturbation_factors, synch), or write a scheduler of your own as a "
            "tunecore.schedulers.TrialScheduler subclass (on_trial_result returning CONTINUE, "
            "PAUSE or STOP)."
        )
        for name in ("_PBTTrialState", "_FutureTrainingResult", "_fill_config", "_explore")
    },
    **{
        f"tunecore.experiment.trial.{name}": (
            f"ray.tune.experiment.trial.{name} is private to Ray's trial runner; a "
            "tunecore.experiment.Trial gives its node as trial.node_ip (and the process as "
            "trial.last_result['pid']), its identity as trial.trial_id, str(trial) and "
            "trial.path."
        )
        for name in ("_Location", "_TrialInfo")
    },
    **{
        f"tunecore.result.{name}": (
            f"ray.tune.result.{name} is a key under which Ray's trial runner hides its own "
            "objects in a Trainable's config; tunecore puts nothing in the config: a trainable "
            "reads its trial's name, id and directory from tunecore.get_context() (or "
            "self.trial_name, self.trial_id, self.logdir in a Trainable)."
        )
        for name in ("TRIAL_INFO", "STDOUT_FILE", "STDERR_FILE")
    },
    **{
        f"tunecore.execution.{module}": (
            f"ray.tune.execution.{module} is part of Ray Tune's trial runner, which tunecore "
            "replaces; run experiments with tunecore.Tuner or tunecore.run."
        )
        for module in (
            "tune_controller",
            "trial_runner",  # Ray < 2.6 (users' PBT subclasses import it)
            "ray_trial_executor",
            "experiment_state",
            "class_cache",
            "cluster_info",
            "insufficient_resources_manager",
        )
    },
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


def _refuse(fullname: str) -> None:
    """A `tunecore...` module that does not exist but is one of Ray's
    modules left out fails with the explanation; any other is left to the
    next finder (a plain ModuleNotFoundError)."""
    reason = explanation(fullname)
    if reason is not None:
        raise NotProvidedError(f"tunecore does not provide {fullname}: {reason}", name=fullname)


def install_finder() -> None:
    """Refuse the modules left out, once no file of tunecore answers."""
    finder.install_finder(_refuse)
