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

A callback of your own reports its way as on Ray: subclass `TuneCallback`
(or one of the two) and define `_handle(trainer, pl_module)`, called at
each hook `on=` names.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tunecore.integration._callbacks import (
    Hooks,
    Metrics,
    hook_names,
    metric_names,
    require_file_name,
    saved_checkpoint,
)
from tunecore.model.errors import require_bool
from tunecore.shell.trainable import Checkpoint, report

try:
    from lightning.pytorch import Callback, LightningModule, Trainer
except ModuleNotFoundError:
    try:
        from pytorch_lightning import Callback, LightningModule, Trainer
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


class TuneCallback(Callback):
    """Ray's base of its Lightning callbacks: at each hook `on` names it
    calls `self._handle(trainer, pl_module)`, which a subclass defines (users
    subclass this, or `TuneReportCheckpointCallback` overriding `_handle`,
    as they do on Ray). `pl_module` is the module Lightning passed to the
    hook; Ray 2.60 hands None there, Lightning passing it positionally."""

    def __init__(self, on: Hooks = "validation_end") -> None:
        super().__init__()
        self._on = hook_names(f"{type(self).__name__}.on", on, LIGHTNING_HOOKS)

    def _handle(self, trainer: Trainer, pl_module: LightningModule | None) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define _handle(trainer, pl_module)")


def _calling_hook(hook: str) -> Callable[..., None]:
    """Lightning's `on_<hook>(trainer, pl_module, ...)`, handing over to
    `_handle` when `on` names the hook."""

    def on_hook(self: TuneCallback, trainer: Trainer, *args: Any, **kwargs: Any) -> None:
        if hook in self._on:
            self._handle(trainer, kwargs.get("pl_module", args[0] if args else None))

    on_hook.__name__ = f"on_{hook}"
    return on_hook


for _hook_name in LIGHTNING_HOOKS:
    setattr(TuneCallback, f"on_{_hook_name}", _calling_hook(_hook_name))


class TuneReportCheckpointCallback(TuneCallback):
    """Reports the trainer's metrics, with a checkpoint of the trainer
    unless `save_checkpoints=False`, at the hooks `on` names (module
    docstring). Its parts are Ray's, for subclasses that override one:
    `_get_report_dict(trainer, pl_module)`, `_get_checkpoint(trainer)` and
    `_handle(trainer, pl_module)`; `_metrics`, `_filename` and
    `_save_checkpoints` hold the arguments as Ray's do."""

    def __init__(
        self,
        metrics: Metrics = None,
        filename: str = "checkpoint",
        save_checkpoints: bool = True,
        on: Hooks = "validation_end",
    ) -> None:
        super().__init__(on=on)
        owner = type(self).__name__
        require_file_name(f"{owner}.filename", filename)
        require_bool(f"{owner}.save_checkpoints", save_checkpoints)
        metric_names(f"{owner}.metrics", metrics)
        self._metrics = [metrics] if isinstance(metrics, str) else metrics
        self._filename = filename
        self._save_checkpoints = save_checkpoints

    def _handle(self, trainer: Trainer, pl_module: LightningModule | None) -> None:
        """Report, outside the sanity check and only with a metric to report."""
        if trainer.sanity_checking:
            return
        result = self._get_report_dict(trainer, pl_module)
        if not result:
            return
        with self._get_checkpoint(trainer) as checkpoint:
            report(result, checkpoint=checkpoint)

    def _get_report_dict(
        self, trainer: Trainer, pl_module: LightningModule | None
    ) -> dict[str, Any] | None:
        """The trainer's metrics (tensors, as numbers) `metrics=` asks for;
        None during the sanity check."""
        if trainer.sanity_checking:
            return None
        available = trainer.callback_metrics
        names = metric_names(f"{type(self).__name__}.metrics", self._metrics)
        if names is None:
            return {key: value.item() for key, value in available.items()}
        result = {}
        for key, name in names.items():
            if name in available:
                result[key] = available[name].item()
            else:
                logger.warning("Metric %s does not exist in `trainer.callback_metrics`.", name)
        return result

    @contextmanager
    def _get_checkpoint(self, trainer: Trainer) -> Iterator[Checkpoint | None]:
        """The trainer saved into `filename` as a checkpoint, or None with
        `save_checkpoints=False`; valid inside the block."""
        if not self._save_checkpoints:
            yield None
            return
        with saved_checkpoint(trainer.save_checkpoint, self._filename) as checkpoint:
            yield checkpoint


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


__all__ = ["TuneCallback", "TuneReportCallback", "TuneReportCheckpointCallback"]
