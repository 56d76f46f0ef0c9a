"""Loggers, under the names Ray Tune users know (`ray.tune.logger`).

Every experiment writes result.json and progress.csv for each trial (the
JSON and CSV loggers; tunecore reads them back for results and resumes) and
TensorBoard event files when tensorboardX is installed, as Ray Tune does
(`TUNE_DISABLE_AUTO_CALLBACK_LOGGERS=1` turns TensorBoard off). Pass one of
these in `RunConfig(callbacks=[...])` to replace the default of its kind,
or subclass `LoggerCallback` for your own. Ray's deprecated per-trial
`Logger` classes run through `LegacyLoggerCallback`.

Ray's per-trial file loggers (`JsonLogger`, `CSVLogger`, `TBXLogger`,
`UnifiedLogger`, `DEFAULT_LOGGERS`) are not provided: the callbacks above
write those same files, once per trial; importing one is an ImportError
naming its callback.
"""

from tunecore._not_provided import not_provided_getattr
from tunecore.logger.csv import CSVLoggerCallback
from tunecore.logger.json import JsonLoggerCallback
from tunecore.logger.logger import LegacyLoggerCallback, Logger, LoggerCallback, pretty_print
from tunecore.logger.noop import NoopLogger
from tunecore.logger.tensorboardx import TBXLoggerCallback

__all__ = [
    "CSVLoggerCallback",
    "JsonLoggerCallback",
    "LegacyLoggerCallback",
    "Logger",
    "LoggerCallback",
    "NoopLogger",
    "TBXLoggerCallback",
    "pretty_print",
]

__getattr__ = not_provided_getattr(__name__)
