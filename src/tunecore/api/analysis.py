"""`ExperimentAnalysis(path)`: Ray Tune's older name for reading an
experiment's results from its directory, with the methods Ray scripts call.

It is a view over `ResultGrid.from_path` (so it reads a finished or a
running experiment, without Ray and without the user's code), or over the
`ResultGrid` of a run (what `tunecore.run` returns, as Ray's `tune.run`
does); its trials are `Trial` views, with Ray's attribute names.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

from tunecore.api.history import as_dataframe, pandas_module
from tunecore.api.results import ResultGrid, Scope, anonymous_default, best_checkpoint
from tunecore.core.experiment.snapshot import BUILTIN, SnapshotKind
from tunecore.core.results import TRAINING_ITERATION, flatten
from tunecore.model import JsonDict
from tunecore.shell.trainable import Checkpoint
from tunecore.shell.trial_view import Trial

if TYPE_CHECKING:
    import pandas


class ExperimentAnalysis:
    """The results of the experiment in `experiment_checkpoint_path` (its
    directory, `~` expanded; its URI in storage, or its path in
    `storage_filesystem`; or a run's `ResultGrid`). `default_metric` and
    `default_mode` default to the experiment's own (`TuneConfig.metric` and
    `mode`)."""

    def __init__(
        self,
        experiment_checkpoint_path: str | os.PathLike[str] | ResultGrid,
        *,
        default_metric: str | None = None,
        default_mode: Literal["min", "max"] | None = None,
        snapshot_kind: SnapshotKind = BUILTIN,
        storage_filesystem: object = None,
    ) -> None:
        grid = experiment_checkpoint_path
        if not isinstance(grid, ResultGrid):
            grid = ResultGrid.from_path(
                grid, snapshot_kind=snapshot_kind, storage_filesystem=storage_filesystem
            )
        self._grid = grid
        self.default_mode = default_mode or grid.mode
        self.default_metric = anonymous_default(default_metric or grid.metric, self.default_mode)
        self.trials = grid.trials
        self._by_id = {t.trial_id: t for t in self.trials}
        self._results = {r.trial_id: r for r in grid}

    @property
    def experiment_path(self) -> str:
        return str(self._grid.experiment_path)

    # -- the best trial ---------------------------------------------------------

    def get_best_trial(
        self,
        metric: str | None = None,
        mode: Literal["min", "max"] | None = None,
        scope: Scope = "last",
        filter_nan_and_inf: bool = True,
    ) -> Trial | None:
        """As `ResultGrid.get_best_result`, but None when no trial has a
        score (as Ray); a lone trial is the best one."""
        if len(self.trials) == 1:
            return self.trials[0]
        metric, mode = self._defaults(metric, mode)
        best = self._grid.find_best(metric, mode, scope, filter_nan_and_inf)
        return None if best is None else self._by_id[best.trial_id]

    def get_best_config(
        self,
        metric: str | None = None,
        mode: Literal["min", "max"] | None = None,
        scope: Scope = "last",
    ) -> JsonDict | None:
        best = self.get_best_trial(metric, mode, scope)
        return None if best is None else best.config

    def get_best_checkpoint(
        self,
        trial: Trial,
        metric: str | None = None,
        mode: Literal["min", "max"] | None = None,
    ) -> Checkpoint | None:
        """The trial's kept checkpoint with the best `metric` (default: the
        experiment's, else `training_iteration`) by `mode`."""
        metric = metric or self.default_metric or TRAINING_ITERATION
        _, mode = self._defaults(metric, mode)
        return best_checkpoint(self._results[trial.trial_id].best_checkpoints, metric, mode)

    def get_last_checkpoint(
        self,
        trial: Trial | None = None,
        metric: str = TRAINING_ITERATION,
        mode: Literal["min", "max"] = "max",
    ) -> Checkpoint | None:
        """The newest kept checkpoint of `trial` (default: the best trial by
        `metric` and `mode`)."""
        trial = trial or self.get_best_trial(metric, mode)
        if trial is None:
            return None
        return self.get_best_checkpoint(trial, TRAINING_ITERATION, "max")

    @property
    def best_trial(self) -> Trial | None:
        return self.get_best_trial(*self._defaults(None, None))

    @property
    def best_config(self) -> JsonDict | None:
        return self.get_best_config(*self._defaults(None, None))

    @property
    def best_checkpoint(self) -> Checkpoint | None:
        best = self.best_trial
        return None if best is None else self.get_best_checkpoint(best)

    @property
    def best_result(self) -> JsonDict | None:
        best = self.best_trial
        return None if best is None else best.last_result

    @property
    def best_dataframe(self) -> pandas.DataFrame | None:
        best = self.best_trial
        return None if best is None else self.trial_dataframes[best.trial_id]

    @property
    def best_result_df(self) -> pandas.DataFrame:
        best = self.best_result
        frame: pandas.DataFrame = pandas_module().DataFrame.from_records(
            [flatten(best or {})], index="trial_id"
        )
        return frame

    # -- every trial ------------------------------------------------------------

    @property
    def results(self) -> dict[str, JsonDict]:
        """Each trial's last result, by trial id."""
        return {t.trial_id: t.last_result for t in self.trials}

    @property
    def results_df(self) -> pandas.DataFrame:
        """Each trial's last result (flattened), indexed by trial id, with
        its config under `config/` as Ray's (whose results carry the config:
        tunecore's results leave it out, so it is added from the trial)."""
        frame: pandas.DataFrame = pandas_module().DataFrame.from_records(
            [
                {**flatten(t.last_result), **flatten({"config": t.config}), "trial_id": t.trial_id}
                for t in self.trials
            ],
            index="trial_id",
        )
        return frame

    @property
    def trial_dataframes(self) -> dict[str, pandas.DataFrame]:
        """Every result of each trial, by trial id (empty without results)."""
        return {t: as_dataframe(r.history or []) for t, r in self._results.items()}

    def dataframe(
        self, metric: str | None = None, mode: Literal["min", "max"] | None = None
    ) -> pandas.DataFrame:
        """`ResultGrid.get_dataframe(filter_metric=metric, filter_mode=mode)`."""
        return self._grid.get_dataframe(filter_metric=metric, filter_mode=mode)

    def get_all_configs(self, prefix: bool = False) -> dict[str, JsonDict]:
        """Each trial's config by trial id; `prefix` flattens it under `config/`."""
        if prefix:
            return {t.trial_id: flatten({"config": t.config}) for t in self.trials}
        return {t.trial_id: t.config for t in self.trials}

    def _defaults(
        self, metric: str | None, mode: Literal["min", "max"] | None
    ) -> tuple[str, Literal["min", "max"]]:
        metric = metric or self.default_metric
        mode = mode or self.default_mode
        if metric is None or mode is None:
            raise ValueError(
                "no metric and mode: pass them, or give the experiment TuneConfig(metric=, "
                "mode=), or ExperimentAnalysis(path, default_metric=, default_mode=)"
            )
        return metric, mode
