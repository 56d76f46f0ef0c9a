"""The names of result keys and result files, as Ray Tune's `ray.tune.result`
spells them, so `from tunecore.result import TRAINING_ITERATION` works where
a script imported them from Ray. Ray's `ray.air.result` (the module of its
`Result` class) rewrites to this module too, so `Result` is here as well,
imported on first use: the integrations that read the keys above must not
load the driver's result classes.

Keys tunecore fills in itself come from `tunecore.core.results`, where
every result-key name it uses lives; the others are conventions of Ray's
examples (`mean_loss`, `episode_reward_mean`) that tunecore only names.
"""

from tunecore._lazy import lazy_attributes
from tunecore._not_provided import not_provided_getattr
from tunecore.core.results import (
    DATE,
    DEFAULT_METRIC,
    DONE,
    EPISODES_THIS_ITER,
    EPISODES_TOTAL,
    EXPERIMENT_TAG,
    HOSTNAME,
    ITERATIONS_SINCE_RESTORE,
    NODE_IP,
    PID,
    RESULT_DUPLICATE,
    SHOULD_CHECKPOINT,
    TIME_SINCE_RESTORE,
    TIME_THIS_ITER_S,
    TIME_TOTAL_S,
    TIMESTAMP,
    TIMESTEPS_SINCE_RESTORE,
    TIMESTEPS_THIS_ITER,
    TIMESTEPS_TOTAL,
    TRAINING_ITERATION,
    TRIAL_ID,
)
from tunecore.shell.storage.resolve import DEFAULT_ROOT
from tunecore.shell.trial_files import (
    ERROR_FILE,
    PARAMS_FILE,
    PROGRESS_FILE,
    RESULT_FILE,
)

MEAN_ACCURACY = "mean_accuracy"
MEAN_LOSS = "mean_loss"
EPISODE_REWARD_MEAN = "episode_reward_mean"
CONFIG_PREFIX = "config"

DEFAULT_RESULTS_DIR = DEFAULT_ROOT
"""Where experiments go without `RunConfig(storage_path=...)`: tunecore's
own directory, not Ray's `~/ray_results`."""
EXPR_PARAM_FILE = PARAMS_FILE
EXPR_RESULT_FILE = RESULT_FILE
EXPR_PROGRESS_FILE = PROGRESS_FILE
EXPR_ERROR_FILE = ERROR_FILE

DEFAULT_EXPERIMENT_INFO_KEYS = ("trainable_name", EXPERIMENT_TAG, TRIAL_ID)
DEFAULT_RESULT_KEYS = (TRAINING_ITERATION, TIME_TOTAL_S, MEAN_ACCURACY, MEAN_LOSS)
DEBUG_METRICS = (TRIAL_ID, "experiment_id", DATE, TIMESTAMP, PID, HOSTNAME, NODE_IP, CONFIG_PREFIX)
"""Ray's keys of a result that need no finished iteration to mean something."""
AUTO_RESULT_KEYS = (
    TRAINING_ITERATION,
    TIME_TOTAL_S,
    EPISODES_TOTAL,
    TIMESTEPS_TOTAL,
    NODE_IP,
    HOSTNAME,
    PID,
    TIME_THIS_ITER_S,
    TIMESTAMP,
    DATE,
    TIME_SINCE_RESTORE,
    TIMESTEPS_SINCE_RESTORE,
    ITERATIONS_SINCE_RESTORE,
    CONFIG_PREFIX,
)

__all__ = [
    "AUTO_RESULT_KEYS",
    "CONFIG_PREFIX",
    "DATE",
    "DEBUG_METRICS",
    "DEFAULT_EXPERIMENT_INFO_KEYS",
    "DEFAULT_METRIC",
    "DEFAULT_RESULTS_DIR",
    "DEFAULT_RESULT_KEYS",
    "DONE",
    "EPISODES_THIS_ITER",
    "EPISODES_TOTAL",
    "EPISODE_REWARD_MEAN",
    "EXPERIMENT_TAG",
    "EXPR_ERROR_FILE",
    "EXPR_PARAM_FILE",
    "EXPR_PROGRESS_FILE",
    "EXPR_RESULT_FILE",
    "HOSTNAME",
    "ITERATIONS_SINCE_RESTORE",
    "MEAN_ACCURACY",
    "MEAN_LOSS",
    "NODE_IP",
    "PID",
    "RESULT_DUPLICATE",
    "SHOULD_CHECKPOINT",
    "TIMESTAMP",
    "TIMESTEPS_THIS_ITER",
    "TIMESTEPS_TOTAL",
    "TIME_SINCE_RESTORE",
    "TIME_THIS_ITER_S",
    "TIME_TOTAL_S",
    "TRAINING_ITERATION",
    "TRIAL_ID",
]

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {"Result": "tunecore.api.results"},
    [*__all__, "Result"],
    missing=not_provided_getattr(__name__),
)
