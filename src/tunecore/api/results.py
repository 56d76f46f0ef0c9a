"""What `Tuner.fit()` returns: one `Result` per trial, and ways to pick the best."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tunecore.core.checkpoints import newest_persistent
from tunecore.core.results import flatten, is_number
from tunecore.model import JsonDict, JsonValue, MetricStats, TrialState, TrialStatus
from tunecore.shell.trainable import Checkpoint

if TYPE_CHECKING:
    import pandas


@dataclass(frozen=True)
class Result:
    """One trial's outcome: its last result, config, directory, newest
    persistent checkpoint and, if it failed, its error."""

    trial_id: str
    metrics: JsonDict
    config: JsonDict
    path: Path
    checkpoint: Checkpoint | None
    error: str | None
    status: TrialStatus
    metric_analysis: Mapping[str, MetricStats]


class ResultGrid(Sequence[Result]):
    """The results of every trial, in the order the trials were created."""

    def __init__(
        self,
        trials: Sequence[TrialState],
        dirs: Mapping[str, Path],
        *,
        metric: str | None,
        mode: Literal["min", "max"] | None,
        experiment_path: Path,
        error: str | None = None,
    ) -> None:
        self._results = [_result(t, dirs[t.trial_id], experiment_path) for t in trials]
        self._metric = metric
        self._mode = mode
        self.experiment_path = experiment_path
        self.experiment_error = error

    def __len__(self) -> int:
        return len(self._results)

    def __getitem__(self, index: int) -> Result:  # type: ignore[override]
        return self._results[index]

    def __iter__(self) -> Iterator[Result]:
        return iter(self._results)

    @property
    def errors(self) -> list[str]:
        return [r.error for r in self._results if r.error is not None]

    @property
    def num_errors(self) -> int:
        return sum(1 for r in self._results if r.status is TrialStatus.ERROR)

    @property
    def num_terminated(self) -> int:
        return sum(1 for r in self._results if r.status is TrialStatus.TERMINATED)

    def get_best_result(
        self,
        metric: str | None = None,
        mode: Literal["min", "max"] | None = None,
        scope: Literal["last", "all", "avg", "last-5-avg", "last-10-avg"] = "last",
    ) -> Result:
        """The trial whose `metric` is best by `mode` (the experiment's by
        default). `scope="last"` compares last results, `"all"` each trial's
        best ever, `"avg"` its running average. Trials that never reported
        the metric (or reported NaN) are passed over."""
        metric = metric or self._metric
        mode = mode or self._mode
        if metric is None or mode is None:
            raise ValueError(
                "get_best_result needs metric and mode: pass them, or set them in TuneConfig"
            )
        if scope not in ("last", "all", "avg"):
            raise ValueError(f"scope={scope!r} is not supported; use 'last', 'all' or 'avg'")
        scored = [
            (value, r)
            for r in self._results
            if (value := _score(r, metric, mode, scope)) is not None
        ]
        if not scored:
            raise ValueError(f"no trial reported a number for metric {metric!r}")
        best = max(scored, key=lambda pair: pair[0] if mode == "max" else -pair[0])
        return best[1]

    def get_dataframe(self) -> pandas.DataFrame:
        """One row per trial: the last result flattened, plus `config/...`
        columns. Needs pandas (`pip install pandas`)."""
        try:
            import pandas  # noqa: PLC0415 - optional dependency
        except ImportError as error:
            raise ImportError("get_dataframe needs pandas: pip install pandas") from error
        rows = []
        for result in self._results:
            row: dict[str, JsonValue] = dict(flatten(result.metrics))
            row.update({f"config/{k}": v for k, v in flatten(result.config).items()})
            row["logdir"] = str(result.path)
            rows.append(row)
        return pandas.DataFrame(rows)


def _score(result: Result, metric: str, mode: str, scope: str) -> float | None:
    if scope == "last":
        value = flatten(result.metrics).get(metric)
        if not is_number(value):
            return None
        number = float(value)  # type: ignore[arg-type]
    else:
        stats = result.metric_analysis.get(metric)
        if stats is None:
            return None
        number = stats.avg if scope == "avg" else (stats.max if mode == "max" else stats.min)
    return None if math.isnan(number) else number


def _result(trial: TrialState, path: Path, experiment_path: Path) -> Result:
    """A trial's result; checkpoint paths in the state are relative to the
    experiment directory (absolute in logs from before that)."""
    checkpoint = newest_persistent(trial.checkpoints)
    return Result(
        trial_id=trial.trial_id,
        metrics=trial.last_result,
        config=trial.spec.config,
        path=path,
        checkpoint=(
            None
            if checkpoint is None
            else Checkpoint.from_directory(str(experiment_path / checkpoint.path))
        ),
        error=trial.error_message if trial.status is TrialStatus.ERROR else None,
        status=trial.status,
        metric_analysis=trial.metric_analysis,
    )
