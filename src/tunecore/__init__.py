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
"""

from tunecore import logger, result, schedulers, search, stopper
from tunecore._version import __version__
from tunecore.api.analysis import ExperimentAnalysis
from tunecore.api.config import (
    CheckpointConfig,
    FailureConfig,
    RunConfig,
    SyncConfig,
    TuneConfig,
)
from tunecore.api.errors import TuneError
from tunecore.api.reporters import CLIReporter, JupyterNotebookReporter
from tunecore.api.results import Result, ResultGrid
from tunecore.api.run import run
from tunecore.api.simulate import simulate
from tunecore.api.tuner import Tuner
from tunecore.core.search.domains import (
    choice,
    grid_search,
    lograndint,
    loguniform,
    qlograndint,
    qloguniform,
    qrandint,
    qrandn,
    quniform,
    randint,
    randn,
    sample_from,
    uniform,
)
from tunecore.search.create import create_searcher
from tunecore.shell.callbacks import Callback
from tunecore.shell.replay import replay
from tunecore.shell.stoppers import Stopper
from tunecore.shell.trainable import (
    Checkpoint,
    Trainable,
    checkpoint_dir,
    get_checkpoint,
    get_context,
    register_trainable,
    report,
)
from tunecore.shell.trainable.resources import PlacementGroupFactory
from tunecore.shell.trainable.wrappers import with_parameters, with_resources
from tunecore.shell.trial_view import Trial

__all__ = [
    "CLIReporter",
    "Callback",
    "Checkpoint",
    "CheckpointConfig",
    "ExperimentAnalysis",
    "FailureConfig",
    "JupyterNotebookReporter",
    "PlacementGroupFactory",
    "Result",
    "ResultGrid",
    "RunConfig",
    "Stopper",
    "SyncConfig",
    "Trainable",
    "Trial",
    "TuneConfig",
    "TuneError",
    "Tuner",
    "__version__",
    "checkpoint_dir",
    "choice",
    "create_searcher",
    "get_checkpoint",
    "get_context",
    "grid_search",
    "logger",
    "lograndint",
    "loguniform",
    "qlograndint",
    "qloguniform",
    "qrandint",
    "qrandn",
    "quniform",
    "randint",
    "randn",
    "register_trainable",
    "replay",
    "report",
    "result",
    "run",
    "sample_from",
    "schedulers",
    "search",
    "simulate",
    "stopper",
    "uniform",
    "with_parameters",
    "with_resources",
]
