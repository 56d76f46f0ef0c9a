"""Ray Tune's LightGBM callbacks (`ray.tune.integration.lightgbm`), for
`lgb.train(..., callbacks=[TuneReportCheckpointCallback()])` inside a
training function (`pip install 'tunecore[lightgbm]'`)::

    from tunecore.integration.lightgbm import TuneReportCheckpointCallback

    def train(config):
        lgb.train(config, train_set, valid_sets=[test_set], valid_names=["eval"],
                  callbacks=[TuneReportCheckpointCallback(frequency=1)])

    booster = TuneReportCheckpointCallback.get_model(results.get_best_result().checkpoint)

Each boosting round reports LightGBM's evaluation results, named
`<valid name>-<metric>` (`eval-binary_logloss`), or those `metrics=` names
(`{"loss": "eval-binary_logloss"}` renames); under `lgb.cv` each metric is
`<name>-mean` with its `<name>-stdv`. Every `frequency` rounds (0: never)
the result carries a checkpoint holding the booster as `filename`, and
with `checkpoint_at_end` so does the last round's (no extra result), as in
Ray Tune.

`TuneReportCallback` reports without checkpoints: Ray Tune 2.60 raises a
DeprecationWarning when it is made; tunecore keeps it working, as the
older Ray Tune examples use it.
"""

from __future__ import annotations

from typing import Any

from tunecore.integration._boosting import Metrics, Postprocess, ReportSettings, load_model
from tunecore.shell.trainable import Checkpoint
from tunecore.utils.dicts import flatten_dict

try:
    from lightgbm import Booster
    from lightgbm.callback import CallbackEnv
except ImportError as error:  # the module's extra says what to install
    raise ImportError(
        "tunecore.integration.lightgbm needs lightgbm: pip install 'tunecore[lightgbm]'"
    ) from error


class TuneReportCheckpointCallback:
    """Reports each round's evaluation results, with a checkpoint of the
    booster every `frequency` rounds and at the last (module docstring)."""

    CHECKPOINT_NAME = "model.txt"

    def __init__(
        self,
        metrics: Metrics = None,
        filename: str = CHECKPOINT_NAME,
        frequency: int = 0,
        checkpoint_at_end: bool = True,
        results_postprocessing_fn: Postprocess | None = None,
    ) -> None:
        self._settings = ReportSettings(
            type(self).__name__,
            metrics=metrics,
            filename=filename,
            frequency=frequency,
            checkpoint_at_end=checkpoint_at_end,
            results_postprocessing_fn=results_postprocessing_fn,
        )

    @classmethod
    def get_model(cls, checkpoint: Checkpoint, filename: str = CHECKPOINT_NAME) -> Booster:
        """The booster a checkpoint of this callback holds (`filename` as
        the callback was made with)."""
        booster: Booster = load_model(checkpoint, filename, lambda path: Booster(model_file=path))
        return booster

    def __call__(self, env: CallbackEnv) -> None:
        """Report round `env.iteration`; LightGBM calls this after each."""
        result = self._settings.result(flatten_dict(evaluation_results(env), "-"))
        last = env.iteration == env.end_iteration - 1
        if self._settings.checkpoint_due(env.iteration) or (
            last and self._settings.checkpoint_at_end
        ):
            self._settings.report(result, env.model.save_model)
        else:
            self._settings.report(result, None)


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


def evaluation_results(env: CallbackEnv) -> dict[str, dict[str, Any]]:
    """{data name: {metric: value}} of one round; a cross-validated metric
    (an entry of five, with its standard deviation) as `<metric>-mean` and
    `<metric>-stdv`."""
    results: dict[str, dict[str, Any]] = {}
    for entry in env.evaluation_result_list or ():
        data_name, metric, value = entry[0], entry[1], entry[2]
        per_data = results.setdefault(data_name, {})
        if len(entry) > 4:
            per_data[f"{metric}-mean"] = value
            per_data[f"{metric}-stdv"] = entry[4]
        else:
            per_data[metric] = value
    return results


__all__ = ["TuneReportCallback", "TuneReportCheckpointCallback"]
