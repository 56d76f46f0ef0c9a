"""What the XGBoost and LightGBM callbacks share: which metrics go into a
result, when a result carries a checkpoint, and how the booster becomes one.

Ray Tune's two callbacks take the same arguments and differ only in how
each library hands over its evaluation results and saves its model, so
those two things are all the library modules keep. A checkpoint is the
booster saved into a fresh directory and reported with
`tunecore.report(metrics, checkpoint=Checkpoint.from_directory(...))`: the
trial takes a copy before `report` returns, so it is kept, ranked and
restored like any checkpoint a training function reports (retention,
`best_checkpoints`, storage URIs, PBT's exploits, resume).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tunecore.integration._callbacks import metric_names, report_saved
from tunecore.model import InvalidFieldError
from tunecore.shell.trainable import Checkpoint, report

Metrics = str | Sequence[str] | Mapping[str, str] | None
"""Ray's `metrics=`: one name, a list of names, or {reported name: library
name}; None reports every metric the library computed."""

Postprocess = Callable[[dict[str, Any]], dict[str, Any]]
SaveModel = Callable[[str], object]
"""Writes the booster to the path given."""


class ReportSettings:
    """The arguments of a `TuneReportCheckpointCallback`, checked as it is
    made (each error names `owner.field`, the value and what is accepted)."""

    def __init__(
        self,
        owner: str,
        *,
        metrics: Metrics,
        filename: object,
        frequency: object,
        checkpoint_at_end: object,
        results_postprocessing_fn: object,
    ) -> None:
        self.owner = owner
        self.names = metric_names(f"{owner}.metrics", metrics)
        if not isinstance(filename, str) or not filename or "/" in filename:
            raise InvalidFieldError(f"{owner}.filename", filename, "a file name, like 'model.ubj'")
        if not isinstance(frequency, int) or isinstance(frequency, bool) or frequency < 0:
            raise InvalidFieldError(f"{owner}.frequency", frequency, "an integer >= 0")
        if not isinstance(checkpoint_at_end, bool):
            raise InvalidFieldError(f"{owner}.checkpoint_at_end", checkpoint_at_end, "a bool")
        if results_postprocessing_fn is not None and not callable(results_postprocessing_fn):
            raise InvalidFieldError(
                f"{owner}.results_postprocessing_fn",
                results_postprocessing_fn,
                "a function taking and returning a dict of metrics",
            )
        self.filename = filename
        self.frequency = frequency
        self.checkpoint_at_end = checkpoint_at_end
        self.postprocess: Postprocess | None = results_postprocessing_fn

    def checkpoint_due(self, iteration: int) -> bool:
        """Whether boosting round `iteration` (from 0) ends with a
        checkpoint: every `frequency` rounds (0: never)."""
        return self.frequency > 0 and (iteration + 1) % self.frequency == 0

    def result(self, computed: Mapping[str, Any]) -> dict[str, Any]:
        """The result to report from the library's flat metrics: those
        named (renamed as asked), or all, then the post-processing."""
        if self.names is None:
            chosen = dict(computed)
        else:
            missing = [name for name in self.names.values() if name not in computed]
            if missing:
                raise InvalidFieldError(
                    f"{self.owner}.metrics",
                    missing[0],
                    f"a metric the booster computes: one of {sorted(computed)}",
                )
            chosen = {key: computed[name] for key, name in self.names.items()}
        return chosen if self.postprocess is None else self.postprocess(chosen)

    def report(self, result: Mapping[str, Any], save: SaveModel | None) -> None:
        """Report `result`, with the model `save` writes as its checkpoint
        when given."""
        if save is None:
            report(result)
        else:
            report_saved(result, save, self.filename)


def load_model(checkpoint: Checkpoint, filename: str, load: Callable[[str], Any]) -> Any:
    """The booster `load` reads from `filename` in `checkpoint`; a missing
    file is a FileNotFoundError naming the file and what the checkpoint
    holds (a callback made with another `filename=`, say)."""
    with checkpoint.as_directory() as directory:
        path = os.path.join(directory, filename)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"get_model(filename={filename!r}): the checkpoint holds no such file "
                f"(it holds {sorted(os.listdir(directory))}); pass the filename= the "
                "callback was made with"
            )
        return load(path)
