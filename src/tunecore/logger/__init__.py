"""Loggers, under the names Ray Tune users know (`ray.tune.logger`).

Every experiment writes result.json and progress.csv for each trial (the
JSON and CSV loggers; tunecore reads them back for results and resumes) and
TensorBoard event files when tensorboardX is installed, as Ray Tune does
(`TUNE_DISABLE_AUTO_CALLBACK_LOGGERS=1` turns TensorBoard off). Pass one of
these in `RunConfig(callbacks=[...])` to replace the default of its kind,
or subclass `LoggerCallback` for your own.

The trackers' loggers are under Ray's module names too, each behind its
extra: `tunecore.logger.aim` (`AimLoggerCallback`), and `.mlflow`, `.wandb`
and `.comet`, the callbacks of `tunecore.integrations`.

Ray's per-trial `Logger` classes (`Logger`, `JsonLogger`, `CSVLogger`,
`TBXLogger`, `UnifiedLogger`, `LegacyLoggerCallback`), which Ray Tune 2.60
no longer has, are not provided: importing one is an ImportError
naming the callback to use.
"""

from tunecore._not_provided import not_provided_getattr
from tunecore.logger.csv import CSVLoggerCallback
from tunecore.logger.json import JsonLoggerCallback
from tunecore.logger.logger import LoggerCallback, pretty_print
from tunecore.logger.tensorboardx import TBXLoggerCallback

__all__ = [
    "CSVLoggerCallback",
    "JsonLoggerCallback",
    "LoggerCallback",
    "TBXLoggerCallback",
    "pretty_print",
]

__getattr__ = not_provided_getattr(__name__)
