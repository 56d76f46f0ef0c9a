"""Ray Tune's PyTorch Lightning callbacks
(`ray.tune.integration.pytorch_lightning`), for `pl.Trainer(...,
callbacks=[TuneReportCheckpointCallback()])` inside a training function
(`pip install 'tunecore[lightning]'`)::

    from tunecore.integration.pytorch_lightning import TuneReportCheckpointCallback

    def train(config):
        trainer = pl.Trainer(max_epochs=10, callbacks=[TuneReportCheckpointCallback(
            {"loss": "val_loss"}, filename="model.ckpt", on="validation_end")])
        trainer.fit(Model(config), data)

    best = results.get_best_result()
    with best.checkpoint.as_directory() as directory:
        model = Model.load_from_checkpoint(os.path.join(directory, "model.ckpt"))

Each hook `on=` names (Lightning's `Callback.on_<hook>` methods, whichever
the installed Lightning has; by default "validation_end") reports the
trainer's `callback_metrics`, or those `metrics=` names (`{"loss":
"val_loss"}` renames; a name the trainer does not have is left out with a
warning, as in Ray), with a checkpoint: `trainer.save_checkpoint` into
`filename` (default "checkpoint"), unless `save_checkpoints=False`.
Nothing is reported during Lightning's sanity check, nor when no metric
asked for is there yet.

Lightning comes as `lightning` (`lightning.pytorch`) and, older, as
`pytorch_lightning`; as in Ray, the first importable is used, and the
trainer must be that package's. `TuneReportCallback(metrics, on)` is the
same without checkpoints (deprecated in Ray Tune, kept working).
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Callable
from typing import Any

from tunecore.integration._callbacks import (
    Hooks,
    Metrics,
    hook_names,
    metric_names,
    report_saved,
    require_file_name,
)
from tunecore.model.errors import require_bool
from tunecore.shell.trainable import report

try:
    from lightning.pytorch import Callback, Trainer
except ModuleNotFoundError:
    try:
        from pytorch_lightning import Callback, Trainer
    except ModuleNotFoundError as error:  # the module's extra says what to install
        raise ImportError(
            "tunecore.integration.pytorch_lightning needs lightning: "
            "pip install 'tunecore[lightning]'"
        ) from error

logger = logging.getLogger(__name__)

LIGHTNING_HOOKS = frozenset(
    name.removeprefix("on_")
    for name, _ in inspect.getmembers(Callback, predicate=inspect.isfunction)
    if name.startswith("on_")
)
"""The hooks `on=` may name: the installed Lightning's `Callback.on_<hook>`
methods."""


class TuneReportCheckpointCallback(Callback):
    """Reports the trainer's metrics, with a checkpoint of the trainer
    unless `save_checkpoints=False`, at the hooks `on` names (module
    docstring)."""

    def __init__(
        self,
        metrics: Metrics = None,
        filename: str = "checkpoint",
        save_checkpoints: bool = True,
        on: Hooks = "validation_end",
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        require_file_name(f"{owner}.filename", filename)
        require_bool(f"{owner}.save_checkpoints", save_checkpoints)
        self._names = metric_names(f"{owner}.metrics", metrics)
        self._filename = filename
        self._save_checkpoints = save_checkpoints
        self._on = hook_names(f"{owner}.on", on, LIGHTNING_HOOKS)

    def _hook(self, hook: str, trainer: Trainer) -> None:
        """Report at `hook` if `on` names it (outside the sanity check,
        and only with a metric to report)."""
        if hook not in self._on or trainer.sanity_checking:
            return
        result = self._result(trainer)
        if not result:
            return
        if self._save_checkpoints:
            report_saved(result, trainer.save_checkpoint, self._filename)
        else:
            report(result)

    def _result(self, trainer: Trainer) -> dict[str, Any]:
        """The trainer's metrics (tensors, as numbers) `metrics=` asks for."""
        available = trainer.callback_metrics
        if self._names is None:
            return {key: value.item() for key, value in available.items()}
        result = {}
        for key, name in self._names.items():
            if name in available:
                result[key] = available[name].item()
            else:
                logger.warning("Metric %s does not exist in `trainer.callback_metrics`.", name)
        return result


def _calling_hook(hook: str) -> Callable[..., None]:
    """Lightning's `on_<hook>(trainer, ...)`, reporting when asked to."""

    def on_hook(
        self: TuneReportCheckpointCallback, trainer: Trainer, *_args: Any, **_kwargs: Any
    ) -> None:
        self._hook(hook, trainer)

    on_hook.__name__ = f"on_{hook}"
    return on_hook


for _hook_name in LIGHTNING_HOOKS:
    setattr(TuneReportCheckpointCallback, f"on_{_hook_name}", _calling_hook(_hook_name))


class TuneReportCallback(TuneReportCheckpointCallback):
    """Reports the trainer's metrics at the hooks `on` names, never a
    checkpoint (Ray Tune's deprecated callback; module docstring)."""

    def __init__(self, metrics: Metrics = None, on: Hooks = "validation_end") -> None:
        warnings.warn(
            "TuneReportCallback is deprecated (as in Ray Tune): use "
            "TuneReportCheckpointCallback(metrics, save_checkpoints=False, on=on)",
            DeprecationWarning,
            stacklevel=2,
        )
        super().__init__(metrics=metrics, save_checkpoints=False, on=on)


__all__ = ["TuneReportCallback", "TuneReportCheckpointCallback"]
