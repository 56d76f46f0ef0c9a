"""`ray.tune.logger.logger`: the callback base for loggers, and Ray's older
per-trial `Logger` classes with the `LegacyLoggerCallback` that runs them.

A `Logger` is made once per trial, with the trial's config, its directory
and the trial, and is handed each of its results (`on_result`); it is
flushed when the trial saves or restores a checkpoint and closed when the
trial ends. Ray has deprecated these in favour of `LoggerCallback`, one
object for all trials; scripts that still write them run unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tunecore.api.pretty import pretty_print
from tunecore.model import JsonValue
from tunecore.shell.callbacks import LoggerCallback
from tunecore.shell.trial_view import Trial

__all__ = ["LegacyLoggerCallback", "Logger", "LoggerCallback", "pretty_print"]


class Logger:
    """One trial's logger (Ray's deprecated per-trial interface): override
    `on_result`, and `_init`, `flush` and `close` as needed."""

    def __init__(self, config: dict[str, Any], logdir: str | None, trial: Trial | None = None):
        self.config = config
        self.logdir = logdir
        self.trial = trial
        self._init()

    def _init(self) -> None:
        """Called at the end of `__init__`: open what the logger writes to."""

    def on_result(self, result: Mapping[str, JsonValue]) -> None:
        """The trial reported `result`."""
        raise NotImplementedError(f"{type(self).__name__} must implement on_result(result)")

    def update_config(self, config: dict[str, Any]) -> None:
        """The trial's config changed (PBT)."""

    def close(self) -> None:
        """The trial ended: release what the logger holds."""

    def flush(self) -> None:
        """The trial saved or restored a checkpoint: write out what is buffered."""


class LegacyLoggerCallback(LoggerCallback):
    """Runs per-trial `Logger` classes as a callback, as Ray does: pass it
    in `RunConfig(callbacks=[LegacyLoggerCallback([MyLogger])])`. Each
    class gets an instance per trial as the trial starts."""

    def __init__(self, logger_classes: Iterable[type[Logger]]) -> None:
        self.logger_classes = list(logger_classes)
        for given in self.logger_classes:
            checked: object = given  # a script may pass anything
            if not (isinstance(checked, type) and issubclass(checked, Logger)):
                raise TypeError(
                    f"logger_classes holds {checked!r}: each must be a subclass of "
                    "tunecore.logger.Logger"
                )
        self._loggers: dict[Trial, list[Logger]] = {}

    def log_trial_start(self, trial: Trial) -> None:
        if trial not in self._loggers:  # a restart after a failure keeps its loggers
            self._loggers[trial] = [
                logger_class(dict(trial.config), trial.local_path, trial)
                for logger_class in self.logger_classes
            ]

    def log_trial_restore(self, trial: Trial) -> None:
        for logger in self._loggers.get(trial, ()):
            logger.flush()

    def log_trial_save(self, trial: Trial) -> None:
        for logger in self._loggers.get(trial, ()):
            logger.flush()

    def log_trial_result(
        self, iteration: int, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        for logger in self._loggers.get(trial, ()):
            logger.on_result(result)

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        for logger in self._loggers.pop(trial, ()):
            logger.close()
