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
"""

from tunecore.api.pretty import pretty_print
from tunecore.shell.callbacks import (
    CSVLoggerCallback,
    JsonLoggerCallback,
    LoggerCallback,
)
from tunecore.shell.callbacks import TensorBoardCallback as TBXLoggerCallback

__all__ = [
    "CSVLoggerCallback",
    "JsonLoggerCallback",
    "LoggerCallback",
    "TBXLoggerCallback",
    "pretty_print",
]
