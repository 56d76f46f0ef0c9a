"""Ray Tune's Keras callbacks (`ray.tune.integration.keras`), for
`model.fit(..., callbacks=[TuneReportCheckpointCallback()])` inside a
training function (Keras 3, any backend: `pip install 'tunecore[keras]'`)::

    from tunecore.integration.keras import TuneReportCheckpointCallback

    def train(config):
        model.fit(x, y, validation_data=(x_val, y_val), callbacks=[
            TuneReportCheckpointCallback(metrics={"mean_accuracy": "accuracy"})])

    best = results.get_best_result()
    with best.checkpoint.as_directory() as directory:
        model = keras.models.load_model(os.path.join(directory, "model.keras"))

Each hook `report_metrics_on` names (Keras's `on_<hook>` methods: by
default "epoch_end") reports Keras's logs, or those `metrics=` names
(`{"loss": "val_loss"}` renames; a name Keras did not log is an error
naming those it did). Each hook `checkpoint_on` names reports the logs with
a checkpoint: the model saved as `model.keras` (`keras.models.load_model`
reads it back), the checkpoint's metadata `{"_model_filename":
"model.keras"}` as Ray's `TensorflowCheckpoint` writes it.

`TuneReportCallback(metrics, on)` reports without checkpoints: Ray Tune
2.60 raises a DeprecationWarning when it is made; tunecore keeps it
working, as the older Ray Tune examples use it. Ray's keras callbacks
import `tensorflow.keras`; these take Keras 3 (`import keras`), so a
model built with `tf.keras` of Keras 2 is not one they can save.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tunecore.integration._callbacks import Hooks, Metrics, hook_names, metric_names, report_saved
from tunecore.model import InvalidFieldError
from tunecore.shell.trainable import report

try:
    import keras
except ImportError as error:  # the module's extra says what to install
    raise ImportError(
        "tunecore.integration.keras needs keras: pip install 'tunecore[keras]'"
    ) from error

KERAS_HOOKS = (
    "epoch_begin",
    "epoch_end",
    "train_batch_begin",
    "train_batch_end",
    "test_batch_begin",
    "test_batch_end",
    "predict_batch_begin",
    "predict_batch_end",
    "train_begin",
    "train_end",
    "test_begin",
    "test_end",
    "predict_begin",
    "predict_end",
)
"""The hooks `on=` may name: Keras's `Callback.on_<hook>` methods, as Ray
allows them."""

MODEL_FILENAME = "model.keras"
MODEL_FILENAME_KEY = "_model_filename"
"""The checkpoint's metadata key naming the model's file (Ray's
`TensorflowCheckpoint.MODEL_FILENAME_KEY`)."""


class TuneReportCheckpointCallback(keras.callbacks.Callback):
    """Reports Keras's logs at the hooks `report_metrics_on` names, with a
    checkpoint of the model at those `checkpoint_on` names (module
    docstring)."""

    def __init__(
        self,
        checkpoint_on: Hooks = "epoch_end",
        report_metrics_on: Hooks = "epoch_end",
        metrics: Metrics = None,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        self._checkpoint_on = hook_names(f"{owner}.checkpoint_on", checkpoint_on, KERAS_HOOKS)
        self._report_on = hook_names(f"{owner}.report_metrics_on", report_metrics_on, KERAS_HOOKS)
        self._metrics_field = f"{owner}.metrics"
        self._names = metric_names(self._metrics_field, metrics)

    def _hook(self, hook: str, logs: Mapping[str, Any] | None) -> None:
        """Report at `hook` if asked to, with a checkpoint if asked to
        (then even where only `checkpoint_on` names the hook, as in Ray)."""
        if hook in self._checkpoint_on:
            metadata = {MODEL_FILENAME_KEY: MODEL_FILENAME}
            report_saved(self._result(logs), self.model.save, MODEL_FILENAME, metadata)
        elif hook in self._report_on:
            report(self._result(logs))

    def _result(self, logs: Mapping[str, Any] | None) -> dict[str, Any]:
        """The logs `metrics=` asks for, under their reported names."""
        logged = dict(logs or {})
        if self._names is None:
            return logged
        for name in self._names.values():
            if name not in logged:
                raise InvalidFieldError(
                    self._metrics_field,
                    name,
                    f"a metric Keras logged here: one of {sorted(logged)}",
                )
        return {key: logged[name] for key, name in self._names.items()}

    def on_epoch_begin(self, epoch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("epoch_begin", logs)

    def on_epoch_end(self, epoch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("epoch_end", logs)

    def on_train_batch_begin(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("train_batch_begin", logs)

    def on_train_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("train_batch_end", logs)

    def on_test_batch_begin(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("test_batch_begin", logs)

    def on_test_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("test_batch_end", logs)

    def on_predict_batch_begin(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("predict_batch_begin", logs)

    def on_predict_batch_end(self, batch: int, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("predict_batch_end", logs)

    def on_train_begin(self, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("train_begin", logs)

    def on_train_end(self, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("train_end", logs)

    def on_test_begin(self, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("test_begin", logs)

    def on_test_end(self, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("test_end", logs)

    def on_predict_begin(self, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("predict_begin", logs)

    def on_predict_end(self, logs: Mapping[str, Any] | None = None) -> None:
        self._hook("predict_end", logs)


class TuneReportCallback(TuneReportCheckpointCallback):
    """Reports Keras's logs at the hooks `on` names, never a checkpoint
    (Ray Tune's older callback; module docstring)."""

    def __init__(self, metrics: Metrics = None, on: Hooks = "epoch_end") -> None:
        hook_names(f"{type(self).__name__}.on", on, KERAS_HOOKS)
        super().__init__(checkpoint_on=[], report_metrics_on=on, metrics=metrics)


__all__ = ["TuneReportCallback", "TuneReportCheckpointCallback"]
