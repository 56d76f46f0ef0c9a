"""tunecore: a typed trial-execution engine for hyperparameter tuning.

Everything a user needs is here under the names Ray Tune users know:
`Tuner`, `TuneConfig`, `RunConfig`, `report`, `get_checkpoint`,
`Checkpoint`, `Trainable`, `Callback`, the search-space functions.
Schedulers are in `tunecore.schedulers`, searchers in `tunecore.search`,
stoppers in `tunecore.stopper`, loggers in `tunecore.logger`, result keys in
`tunecore.result`; `import tunecore as tune` reaches them all
(`tune.schedulers.ASHAScheduler`) without another import.
The pure core (`tunecore.core`) and its data (`tunecore.model`) can be used
on their own: they need no Ray and no clock.

The names are imported when first used (`tunecore._lazy`): a worker
process imports `tunecore.shell...` modules, which run this file first, and
should not pay for the whole API (about 0.17 s of imports per new actor).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tunecore._lazy import lazy_attributes
from tunecore._not_provided import install_finder, not_provided_getattr
from tunecore._ray_train_modules import install_finder as install_ray_train_finder
from tunecore._ray_train_names import passing_through
from tunecore._version import __version__ as __version__

if TYPE_CHECKING:
    from tunecore import analysis as analysis
    from tunecore import callback as callback
    from tunecore import context as context
    from tunecore import error as error
    from tunecore import execution as execution
    from tunecore import experiment as experiment
    from tunecore import experimental as experimental
    from tunecore import logger as logger
    from tunecore import progress_reporter as progress_reporter
    from tunecore import registry as registry
    from tunecore import result as result
    from tunecore import result_grid as result_grid
    from tunecore import schedulers as schedulers
    from tunecore import search as search
    from tunecore import session as session
    from tunecore import stopper as stopper
    from tunecore import syncer as syncer
    from tunecore import trainable as trainable
    from tunecore import tune as tune
    from tunecore import tune_config as tune_config
    from tunecore import tuner as tuner
    from tunecore import utils as utils
    from tunecore.api.analysis import ExperimentAnalysis as ExperimentAnalysis
    from tunecore.api.config import CheckpointConfig as CheckpointConfig
    from tunecore.api.config import FailureConfig as FailureConfig
    from tunecore.api.config import ResumeConfig as ResumeConfig
    from tunecore.api.config import RunConfig as RunConfig
    from tunecore.api.config import SyncConfig as SyncConfig
    from tunecore.api.config import TuneConfig as TuneConfig
    from tunecore.api.errors import TuneError as TuneError
    from tunecore.api.experiment import Experiment as Experiment
    from tunecore.api.reporters import CLIReporter as CLIReporter
    from tunecore.api.reporters import JupyterNotebookReporter as JupyterNotebookReporter
    from tunecore.api.reporters import ProgressReporter as ProgressReporter
    from tunecore.api.results import Result as Result
    from tunecore.api.results import ResultGrid as ResultGrid
    from tunecore.api.run import run as run
    from tunecore.api.run import run_experiments as run_experiments
    from tunecore.api.simulate import simulate as simulate
    from tunecore.api.tuner import Tuner as Tuner
    from tunecore.context import TrainContext as TrainContext
    from tunecore.core.search.domains import lograndint as lograndint
    from tunecore.core.search.domains import loguniform as loguniform
    from tunecore.core.search.domains import qlograndint as qlograndint
    from tunecore.core.search.domains import qloguniform as qloguniform
    from tunecore.core.search.domains import qrandint as qrandint
    from tunecore.core.search.domains import qrandn as qrandn
    from tunecore.core.search.domains import quniform as quniform
    from tunecore.core.search.domains import randint as randint
    from tunecore.core.search.domains import randn as randn
    from tunecore.core.search.domains import sample_from as sample_from
    from tunecore.core.search.domains import uniform as uniform
    from tunecore.registry import register_env as register_env
    from tunecore.schedulers.create import create_scheduler as create_scheduler
    from tunecore.search.create import create_searcher as create_searcher
    from tunecore.search.object_values import choice as choice
    from tunecore.search.object_values import grid_search as grid_search
    from tunecore.shell.callbacks import Callback as Callback
    from tunecore.shell.replay import replay as replay
    from tunecore.shell.stoppers import Stopper as Stopper
    from tunecore.shell.trainable import Checkpoint as Checkpoint
    from tunecore.shell.trainable import Trainable as Trainable
    from tunecore.shell.trainable import checkpoint_dir as checkpoint_dir
    from tunecore.shell.trainable import get_checkpoint as get_checkpoint
    from tunecore.shell.trainable import get_context as get_context
    from tunecore.shell.trainable import register_trainable as register_trainable
    from tunecore.shell.trainable import report as report
    from tunecore.shell.trainable.placement_group import (
        PlacementGroupFactory as PlacementGroupFactory,
    )
    from tunecore.shell.trainable.scaling_config import ScalingConfig as ScalingConfig
    from tunecore.shell.trainable.worker import TuneContext as TuneContext
    from tunecore.shell.trainable.wrappers import with_parameters as with_parameters
    from tunecore.shell.trainable.wrappers import with_resources as with_resources
    from tunecore.shell.trial_view import Trial as Trial

# Each public name and the module it lives in (for a submodule, itself).
_HOMES: dict[str, str] = {
    # submodules Ray's `ray.tune` namespace holds once imported (`tune.analysis...`)
    "analysis": "tunecore.analysis",
    "callback": "tunecore.callback",
    "context": "tunecore.context",
    "error": "tunecore.error",
    "experimental": "tunecore.experimental",
    "progress_reporter": "tunecore.progress_reporter",
    "registry": "tunecore.registry",
    "result_grid": "tunecore.result_grid",
    "syncer": "tunecore.syncer",
    "trainable": "tunecore.trainable",
    "tune": "tunecore.tune",
    "tune_config": "tunecore.tune_config",
    "tuner": "tunecore.tuner",
    "utils": "tunecore.utils",
    "execution": "tunecore.execution",  # `ray.tune.execution.placement_groups...`
    "experiment": "tunecore.experiment",
    "logger": "tunecore.logger",
    "result": "tunecore.result",
    "schedulers": "tunecore.schedulers",
    "search": "tunecore.search",
    "session": "tunecore.session",
    "stopper": "tunecore.stopper",
    "ExperimentAnalysis": "tunecore.api.analysis",
    "CheckpointConfig": "tunecore.api.config",
    "FailureConfig": "tunecore.api.config",
    "RunConfig": "tunecore.api.config",
    "ResumeConfig": "tunecore.api.config",
    "SyncConfig": "tunecore.api.config",
    "TuneConfig": "tunecore.api.config",
    "TuneError": "tunecore.api.errors",
    "Experiment": "tunecore.api.experiment",
    "CLIReporter": "tunecore.api.reporters",
    "JupyterNotebookReporter": "tunecore.api.reporters",
    "ProgressReporter": "tunecore.api.reporters",
    "Result": "tunecore.api.results",
    "ResultGrid": "tunecore.api.results",
    "run": "tunecore.api.run",
    "run_experiments": "tunecore.api.run",
    "simulate": "tunecore.api.simulate",
    "Tuner": "tunecore.api.tuner",
    "choice": "tunecore.search.object_values",
    "grid_search": "tunecore.search.object_values",
    "lograndint": "tunecore.core.search.domains",
    "loguniform": "tunecore.core.search.domains",
    "qlograndint": "tunecore.core.search.domains",
    "qloguniform": "tunecore.core.search.domains",
    "qrandint": "tunecore.core.search.domains",
    "qrandn": "tunecore.core.search.domains",
    "quniform": "tunecore.core.search.domains",
    "randint": "tunecore.core.search.domains",
    "randn": "tunecore.core.search.domains",
    "sample_from": "tunecore.core.search.domains",
    "uniform": "tunecore.core.search.domains",
    "register_env": "tunecore.registry",
    "create_scheduler": "tunecore.schedulers.create",
    "create_searcher": "tunecore.search.create",
    "Callback": "tunecore.shell.callbacks",
    "replay": "tunecore.shell.replay",
    "Stopper": "tunecore.shell.stoppers",
    "Checkpoint": "tunecore.shell.trainable",
    "Trainable": "tunecore.shell.trainable",
    "checkpoint_dir": "tunecore.shell.trainable",
    "get_checkpoint": "tunecore.shell.trainable",
    "get_context": "tunecore.shell.trainable",
    "register_trainable": "tunecore.shell.trainable",
    "report": "tunecore.shell.trainable",
    "PlacementGroupFactory": "tunecore.shell.trainable.placement_group",
    "ScalingConfig": "tunecore.shell.trainable.scaling_config",
    "TrainContext": "tunecore.context",
    "TuneContext": "tunecore.shell.trainable.worker",
    "with_parameters": "tunecore.shell.trainable.wrappers",
    "with_resources": "tunecore.shell.trainable.wrappers",
    "Trial": "tunecore.shell.trial_view",
}

__all__ = [
    "CLIReporter",
    "Callback",
    "Checkpoint",
    "CheckpointConfig",
    "Experiment",
    "ExperimentAnalysis",
    "FailureConfig",
    "JupyterNotebookReporter",
    "PlacementGroupFactory",
    "ProgressReporter",
    "Result",
    "ResultGrid",
    "ResumeConfig",
    "RunConfig",
    "ScalingConfig",
    "Stopper",
    "SyncConfig",
    "TrainContext",
    "Trainable",
    "Trial",
    "TuneConfig",
    "TuneContext",
    "TuneError",
    "Tuner",
    "__version__",
    "analysis",
    "callback",
    "checkpoint_dir",
    "choice",
    "context",
    "create_scheduler",
    "create_searcher",
    "error",
    "execution",
    "experiment",
    "experimental",
    "get_checkpoint",
    "get_context",
    "grid_search",
    "logger",
    "lograndint",
    "loguniform",
    "progress_reporter",
    "qlograndint",
    "qloguniform",
    "qrandint",
    "qrandn",
    "quniform",
    "randint",
    "randn",
    "register_env",
    "register_trainable",
    "registry",
    "replay",
    "report",
    "result",
    "result_grid",
    "run",
    "run_experiments",
    "sample_from",
    "schedulers",
    "search",
    "session",
    "simulate",
    "stopper",
    "syncer",
    "trainable",
    "tune",
    "tune_config",
    "tuner",
    "uniform",
    "utils",
    "with_parameters",
    "with_resources",
]


if not TYPE_CHECKING:  # hidden from type checkers, which would accept any name through it
    __getattr__, __dir__ = lazy_attributes(
        __name__, _HOMES, __all__, missing=passing_through(not_provided_getattr(__name__))
    )

# First Ray Train's modules, passed through (tunecore.torch, tunecore.examples.pytorch)...
install_ray_train_finder()
# ...then a Ray module tunecore leaves out fails saying what to use instead.
install_finder()
