"""Ray Tune's XGBoost callbacks (`ray.tune.integration.xgboost`), for
`xgb.train(..., callbacks=[TuneReportCheckpointCallback()])` inside a
training function (`pip install 'tunecore[xgboost]'`)::

    from tunecore.integration.xgboost import TuneReportCheckpointCallback

    def train(config):
        xgb.train(config, train_set, evals=[(test_set, "test")],
                  callbacks=[TuneReportCheckpointCallback(frequency=1)])

    best = results.get_best_result()
    booster = TuneReportCheckpointCallback.get_model(best.checkpoint)

Each boosting round reports XGBoost's evaluation results, named
`<evals name>-<metric>` (`test-logloss`), or those `metrics=` names
(`{"loss": "test-logloss"}` renames). Every `frequency` rounds (0: never)
the result carries a checkpoint holding the booster as `filename`; with
`checkpoint_at_end`, training ends with one more result, the last round's
metrics with the final booster (unless the last round just had one), as in
Ray Tune. Under `xgb.cv` a result holds each metric's (mean, std) pair
(`results_postprocessing_fn` can reduce them) and no checkpoint can be
taken: pass `checkpoint_at_end=False` or use `TuneReportCallback`.

`TuneReportCallback` reports without checkpoints. Ray Tune 2.60 raises a
DeprecationWarning when it is made; tunecore keeps it working, as the
older Ray Tune examples use it.
"""

from __future__ import annotations

from typing import Any

from tunecore.integration._boosting import Metrics, Postprocess, ReportSettings, load_model
from tunecore.shell.trainable import Checkpoint
from tunecore.utils.dicts import flatten_dict

try:
    from xgboost import Booster
    from xgboost.callback import TrainingCallback
except ImportError as error:  # the module's extra says what to install
    raise ImportError(
        "tunecore.integration.xgboost needs xgboost: pip install 'tunecore[xgboost]'"
    ) from error


class TuneReportCheckpointCallback(TrainingCallback):
    """Reports each round's evaluation results, with a checkpoint of the
    booster every `frequency` rounds and at the end (module docstring)."""

    CHECKPOINT_NAME = "model.ubj"

    def __init__(
        self,
        metrics: Metrics = None,
        filename: str = CHECKPOINT_NAME,
        frequency: int = 0,
        checkpoint_at_end: bool = True,
        results_postprocessing_fn: Postprocess | None = None,
    ) -> None:
        super().__init__()
        self._settings = ReportSettings(
            type(self).__name__,
            metrics=metrics,
            filename=filename,
            frequency=frequency,
            checkpoint_at_end=checkpoint_at_end,
            results_postprocessing_fn=results_postprocessing_fn,
        )
        self._last_result: dict[str, Any] | None = None
        self._last_checkpoint_round: int | None = None

    @classmethod
    def get_model(cls, checkpoint: Checkpoint, filename: str = CHECKPOINT_NAME) -> Booster:
        """The booster a checkpoint of this callback holds (`filename` as
        the callback was made with)."""

        def load(path: str) -> Booster:
            booster = Booster()
            booster.load_model(path)
            return booster

        booster: Booster = load_model(checkpoint, filename, load)
        return booster

    def after_iteration(self, model: Any, epoch: int, evals_log: Any) -> bool:
        """Report round `epoch` (from 0); False: XGBoost goes on training."""
        flat = {key: values[-1] for key, values in flatten_dict(evals_log, "-").items()}
        self._last_result = self._settings.result(flat)
        if self._settings.checkpoint_due(epoch):
            self._last_checkpoint_round = epoch
            self._settings.report(self._last_result, self._saver(model))
        else:
            self._settings.report(self._last_result, None)
        return False

    def after_training(self, model: Any) -> Any:
        """The final checkpoint, unless the last round already took one."""
        if not self._settings.checkpoint_at_end:
            return model
        if self._last_checkpoint_round == model.num_boosted_rounds() - 1:
            return model
        self._settings.report(self._last_result or {}, self._saver(model))
        return model

    def _saver(self, model: Any) -> Any:
        if not isinstance(model, Booster):  # xgb.cv hands over its folds
            raise TypeError(
                f"{type(self).__name__} cannot checkpoint xgb.cv's folds "
                f"({type(model).__name__}, not a Booster): make it with frequency=0 and "
                "checkpoint_at_end=False, or use TuneReportCallback"
            )
        return model.save_model


class TuneReportCallback(TuneReportCheckpointCallback):
    """Reports each round's evaluation results, never a checkpoint (Ray
    Tune's older callback; module docstring)."""

    def __init__(
        self, metrics: Metrics = None, results_postprocessing_fn: Postprocess | None = None
    ) -> None:
        super().__init__(
            metrics=metrics,
            frequency=0,
            checkpoint_at_end=False,
            results_postprocessing_fn=results_postprocessing_fn,
        )


__all__ = ["TuneReportCallback", "TuneReportCheckpointCallback"]
