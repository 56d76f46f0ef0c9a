"""`ray.air.constants`, `ray.train.constants` and `ray.tune.constants`, which
the import rewriting all turns into `tunecore.constants`: the result keys
and file names scripts import from there (`from ray.air.constants import
TRAINING_ITERATION, EXPR_RESULT_FILE`), where experiments go without a
`storage_path`, and Ray's variable for the trial's working directory.

The rest of those modules is Ray's machinery (Ray Train's data keys,
timeouts, its environment variables, its pickle files): each such name is a
`NotProvidedError` saying what to use (`tunecore._not_provided`). Ray
Train's `TIME_TOTAL_S` ("_time_total_s", a Ray Train worker key) is one of
them, so it cannot be mistaken for Tune's `tunecore.result.TIME_TOTAL_S`.
"""

from pathlib import Path

from tunecore._not_provided import not_provided_getattr
from tunecore.result import (
    EXPR_ERROR_FILE,
    EXPR_PARAM_FILE,
    EXPR_PROGRESS_FILE,
    EXPR_RESULT_FILE,
    TIME_THIS_ITER_S,
    TIMESTAMP,
    TRAINING_ITERATION,
)
from tunecore.shell.storage.resolve import DEFAULT_ROOT

DEFAULT_STORAGE_PATH = Path(DEFAULT_ROOT).expanduser().as_posix()
"""Where experiments go without `RunConfig(storage_path=...)`, expanded as
Ray expands its `~/ray_results`: tunecore's own directory."""
RAY_CHDIR_TO_TRIAL_DIR = "RAY_CHDIR_TO_TRIAL_DIR"
"""Ray's variable that tunecore honours too: "0" keeps trials on Ray workers
in the driver's working directory (`tunecore.api.plan.CHDIR_VARIABLE`,
spelled out here so importing the constants loads no driver code)."""

__all__ = [
    "DEFAULT_STORAGE_PATH",
    "EXPR_ERROR_FILE",
    "EXPR_PARAM_FILE",
    "EXPR_PROGRESS_FILE",
    "EXPR_RESULT_FILE",
    "RAY_CHDIR_TO_TRIAL_DIR",
    "TIMESTAMP",
    "TIME_THIS_ITER_S",
    "TRAINING_ITERATION",
]

__getattr__ = not_provided_getattr(__name__)
