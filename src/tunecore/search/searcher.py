"""Ray Tune's imperative `Searcher`: the base of every ask/tell optimizer.

A Ray Tune searcher is an object that keeps its own state: `suggest(trial_id)`
returns a config (or None: nothing now, or `Searcher.FINISHED`), and
`on_trial_result` / `on_trial_complete` tell it what happened. tunecore runs
such an object in the shell, never in the pure core: the core holds an
`ExternalSearcher` in its place, which decides *when* to ask and records
*what* to tell, and every config the object suggests enters the event log
as an `Asked` event (`tunecore.shell.searchers`). Replay therefore needs
neither the object nor the package behind it.

What tunecore adds to Ray's API, all optional for a searcher of the user's
own:

- `to_spec()` / `from_spec(spec)`: JSON from which a fresh, equal searcher
  is built. `Tuner.restore` rebuilds the searcher from it and feeds it the
  log's tells and asks in log order, so a seeded searcher continues with
  exactly the suggestions an uninterrupted run would have made. A searcher
  without a spec (the default) must be passed again:
  `Tuner.restore(path, trainable, search_alg=...)`; so must one whose class
  is not in a module this process has imported (a log never makes a
  restore import code: only tunecore's own modules are imported).
- `use_seed(seed)`: the experiment's seed, for a searcher the user did not
  seed, so that a run repeats and a resume can rebuild it.
- `warm_start(from_experiment=...)`: tell the searcher every finished trial
  of an earlier experiment before its first suggestion.

Tells reach the object in log order just before its next `suggest` (and
the rest when the experiment ends), not at the moment the result arrives:
that order is what the log records and what a resume replays.
"""

from __future__ import annotations

import glob
import json
import os
import uuid
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Self

from tunecore._lazy import lazy_attributes
from tunecore._not_provided import not_provided_getattr
from tunecore.model import InvalidFieldError, JsonDict

if TYPE_CHECKING:
    # Re-exported (Ray's module defines it; see `__getattr__` below).
    from tunecore.search.concurrency_limiter import (
        ConcurrencyLimiter as ConcurrencyLimiter,  # noqa: PLC0414
    )

SAVED_FORMAT = "tunecore-searcher-1"
"""What `Searcher.save` writes: a pointer to the experiment, not a state."""

Metric = str | list[str]
ModeName = str | list[str]


class Searcher:
    """Subclass it as Ray Tune's docs say: call `super().__init__(metric=...,
    mode=...)`, implement `suggest` and `on_trial_complete` (and
    `on_trial_result` to hear intermediate results)."""

    FINISHED: ClassVar[str] = "FINISHED"
    CKPT_FILE_TMPL: ClassVar[str] = "searcher-state-{}.json"
    """The file `save_to_dir` writes (Ray's is a pickle, `.pkl`)."""

    def __init__(self, metric: Metric | None = None, mode: ModeName | None = None) -> None:
        self._metric: Any = metric
        self._mode: Any = mode
        self._warm_from: str | None = None
        _check_objective(type(self).__name__, metric, mode)

    @property
    def metric(self) -> Any:
        """The metric it optimises (a list for several objectives)."""
        return self._metric

    @property
    def mode(self) -> Any:
        """'min' or 'max' (a list, one per metric, for several objectives)."""
        return self._mode

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any
    ) -> bool:
        """Take the Tuner's metric, mode and param space where it has none.
        False: it keeps its own (Ray's contract; the Tuner then refuses a
        param space with values to search)."""
        return False

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        """The config for trial `trial_id`; None for nothing right now (it is
        asked again after its next tell); `Searcher.FINISHED` for never."""
        raise NotImplementedError(f"{type(self).__name__}.suggest")

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        """An intermediate result. Only a searcher that overrides this hears
        them (the log keeps them for it until its next suggestion)."""

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        """The trial ended: with its last result, early (None), or in error."""

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        """A point evaluated outside this search (a warm start, a trial
        added with `tunecore add`); not every searcher can take one."""
        raise NotImplementedError(f"{type(self).__name__}.add_evaluated_point")

    def add_evaluated_trials(self, trials_or_analysis: object, metric: str) -> None:
        """Tell this searcher the trials of an earlier run, as Ray's does:
        `trials_or_analysis` is a `ResultGrid`, an `ExperimentAnalysis`, a
        `Trial` or a list of them. Each trial that reported `metric` goes to
        `add_evaluated_point` with its config and last value of `metric`
        (`error` for a trial in ERROR, `pruned` for one stopped before it
        said `done`); a trial that never reported it is skipped. Warns when
        no trial finished with `metric`, which is most often a misspelling.
        A searcher that cannot take points raises NotImplementedError, as
        `add_evaluated_point` does."""
        if type(self).add_evaluated_point is Searcher.add_evaluated_point:
            raise NotImplementedError(
                f"{type(self).__name__} cannot take evaluated trials: it does not implement "
                "add_evaluated_point"
            )
        trials = _trials_of(trials_or_analysis)
        finished_with_metric = False
        for trial in trials:
            last = dict(trial.last_result or {})
            terminated = trial.status == "TERMINATED"
            finished_with_metric |= terminated and metric in last and bool(last.get("done"))
            if metric not in last:
                continue
            self.add_evaluated_point(
                dict(trial.config),
                last[metric],
                error=trial.status == "ERROR",
                pruned=terminated and not last.get("done", False),
                intermediate_values=None,
            )
        if not finished_with_metric:
            warnings.warn(
                f"add_evaluated_trials: no finished trial reported metric={metric!r}; "
                "check the metric's name",
                stacklevel=2,
            )

    def set_max_concurrency(self, max_concurrent: int) -> bool:
        """Whether it bounds its own concurrency (Ray's hook for
        `ConcurrencyLimiter`); False: the limiter does."""
        return False

    # tunecore's additions -------------------------------------------------

    def use_seed(self, seed: int) -> None:
        """The experiment's seed, given before the first suggestion. A
        searcher that draws random numbers seeds itself with it unless the
        user seeded it."""

    def to_spec(self) -> JsonDict | None:
        """JSON from which `from_spec` builds this searcher afresh (as it
        was before its first suggestion); None when it cannot."""
        return None

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Self:
        """The searcher `to_spec` described."""
        raise NotImplementedError(f"{cls.__name__}.from_spec")

    def warm_start(self, from_experiment: str | os.PathLike[str]) -> Self:
        """Tell this searcher every finished trial of the experiment at
        `from_experiment` (a directory or a storage URI) before it suggests
        anything. The trials are read when `fit()` starts and recorded in
        this experiment's log, so a resume never reads them again."""
        self._warm_from = os.fspath(from_experiment)
        return self

    @property
    def warm_start_source(self) -> str | None:
        """Where `warm_start` reads from, if it was called."""
        return getattr(self, "_warm_from", None)

    # Ray's save and restore, without a pickle ----------------------------

    def restore_from_dir(self, checkpoint_dir: str | os.PathLike[str]) -> None:
        """Continue from the searcher that ran the experiment in
        `checkpoint_dir` (a directory or a storage URI): when `fit()` starts,
        this searcher is told and asked everything that one was, in the
        order its log records, so it stands exactly where that one ended (a
        seeded, deterministic searcher of the same class and arguments).
        The history is copied into the new experiment's log. A directory
        `save_to_dir` wrote into is read as Ray reads it: the newest
        searcher file there names the experiment."""
        saved = self._saved_in(checkpoint_dir)
        if saved:
            self.restore(max(saved))
        else:
            self._restore_from: str | None = os.fspath(checkpoint_dir)

    def save_to_dir(
        self, checkpoint_dir: str | os.PathLike[str], session_str: str = "default"
    ) -> None:
        """Ray's `save_to_dir`: `save` into `checkpoint_dir` as
        `searcher-state-<session_str>.json` (written beside, then renamed
        over, as Ray's), which `restore_from_dir(checkpoint_dir)` reads."""
        name = self.CKPT_FILE_TMPL.format(session_str)
        temporary = os.path.join(checkpoint_dir, f".{uuid.uuid4()}-tmp-{name}")
        self.save(temporary)
        os.replace(temporary, os.path.join(checkpoint_dir, name))

    def _saved_in(self, checkpoint_dir: str | os.PathLike[str]) -> list[str]:
        """The searcher files `save_to_dir` wrote into a local directory."""
        directory = os.fspath(checkpoint_dir)
        if not os.path.isdir(directory):
            return []  # a storage URI, or an experiment not yet there
        pattern = self.CKPT_FILE_TMPL.format("*")
        return glob.glob(os.path.join(glob.escape(directory), pattern))

    def save(self, checkpoint_path: str | os.PathLike[str]) -> None:
        """Write where this searcher's history is: a small JSON file naming
        the experiment it last ran in (its log holds every tell and ask),
        never a pickle. `restore(path)` on a new searcher reads it. One that
        has not run yet has no history: its file says so, as Ray's save of
        an unused searcher writes its untouched state."""
        record = {
            "format": SAVED_FORMAT,
            "searcher": class_path(self),
            "experiment": getattr(self, "_ran_in", None),
        }
        with open(checkpoint_path, "w", encoding="utf-8") as file:
            json.dump(record, file)

    def restore(self, checkpoint_path: str | os.PathLike[str]) -> None:
        """Continue from the searcher `save` described (see
        `restore_from_dir`); from one that had not run, nothing changes."""
        try:
            with open(checkpoint_path, encoding="utf-8") as file:
                record = json.load(file)
            valid = record["format"] == SAVED_FORMAT
            experiment = record["experiment"]
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
            valid, experiment = False, None
        if not valid or not isinstance(experiment, str | None):
            raise ValueError(
                f"{type(self).__name__}.restore: {os.fspath(checkpoint_path)!r} is not a "
                "searcher file tunecore's save() wrote (tunecore never reads pickles)"
            )
        if experiment is not None:
            self._restore_from = experiment  # the experiment itself, never its files again

    @property
    def restore_source(self) -> str | None:
        """The experiment `restore_from_dir` or `restore` continues from."""
        return getattr(self, "_restore_from", None)

    def ran_in(self, experiment: str) -> None:
        """The experiment this searcher runs in (`Tuner.fit` says so), for `save`."""
        self._ran_in = experiment

    @property
    def hears_results(self) -> bool:
        """Whether it overrides `on_trial_result` (only then are
        intermediate results kept for it)."""
        return type(self).on_trial_result is not Searcher.on_trial_result


def _trials_of(given: object) -> list[Any]:
    """The trials in what `add_evaluated_trials` was given: a results object
    (anything with `trials`), one trial (anything with `config`,
    `last_result` and `status`) or a list or tuple of trials."""
    if isinstance(given, list | tuple):
        return list(given)
    if all(hasattr(given, name) for name in ("config", "last_result", "status")):
        return [given]
    trials = getattr(given, "trials", None)
    if trials is None:
        raise NotImplementedError(
            f"add_evaluated_trials got {type(given).__name__}: give a ResultGrid, an "
            "ExperimentAnalysis, a Trial or a list of Trials"
        )
    return list(trials)


def class_path(searcher: Searcher) -> str:
    """`module:qualname` of the searcher's class: how a log names it."""
    kind = type(searcher)
    return f"{kind.__module__}:{kind.__qualname__}"


def _check_objective(owner: str, metric: object, mode: object) -> None:
    """Ray's rules for `metric` and `mode`, as errors naming the field."""
    if mode is None or metric is None:
        if isinstance(mode, str) and mode not in ("min", "max"):
            raise InvalidFieldError(f"{owner}.mode", mode, "'min' or 'max'")
        return
    if isinstance(mode, str):
        if mode not in ("min", "max"):
            raise InvalidFieldError(f"{owner}.mode", mode, "'min' or 'max'")
        if not isinstance(metric, str):
            raise InvalidFieldError(f"{owner}.metric", metric, "a metric name, as mode is one")
        return
    if not isinstance(mode, Sequence) or not isinstance(metric, Sequence):
        raise InvalidFieldError(f"{owner}.mode", mode, "'min', 'max' or a list of them")
    if isinstance(metric, str) or len(metric) != len(mode):
        raise InvalidFieldError(
            f"{owner}.metric", metric, f"a list of {len(mode)} metric names, one per mode"
        )
    for index, each in enumerate(mode):
        if each not in ("min", "max", "obs"):
            raise InvalidFieldError(f"{owner}.mode[{index}]", each, "'min', 'max' or 'obs'")


# Ray defines ConcurrencyLimiter in this module, and scripts import it from
# here; it is imported on first use, as the limiter's module needs this one.
__getattr__, __dir__ = lazy_attributes(
    __name__,
    {"ConcurrencyLimiter": "tunecore.search.concurrency_limiter"},
    public=["ConcurrencyLimiter"],
    missing=not_provided_getattr(__name__),
)
