"""What a callback written with Ray's signatures (`trials: List[Trial]`,
`result: Dict`) is handed on a real run: a real list of every trial in
creation order, whose list operations all see the trials, and a dict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tunecore
from tunecore.model import JsonDict
from tunecore.shell.callbacks import CallbackList, LoggerCallback, ResultFiles, reads_trials
from tunecore.shell.trial_view import Trial


def reports_twice(config: JsonDict) -> None:
    import tunecore  # noqa: PLC0415 - the trainable's own import

    for step in range(2):
        tunecore.report({"loss": float(step)})


def three_trials_reporting_twice(tmp_path: Path, callback: tunecore.Callback) -> list[str]:
    """Run them with `callback`; their ids in the order of the results."""
    grid = tunecore.Tuner(
        reports_twice,
        param_space={"x": tunecore.grid_search([1, 2, 3])},
        run_config=tunecore.RunConfig(
            storage_path=str(tmp_path), executor="in_process", callbacks=[callback]
        ),
    ).fit()
    return [str(result.metrics["trial_id"]) for result in grid]


class ListsTrials(tunecore.Callback):
    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str]]] = []

    def _record(self, hook: str, trials: list[Trial]) -> None:
        assert isinstance(trials, list)
        ids = [trial.trial_id for trial in trials]
        # The list operations that do not iterate see the same trials
        # (`[] + trials` is `list.__add__` on the left operand).
        assert [] + trials == trials == list(trials) == trials.copy() == trials[:]  # noqa: RUF005
        assert len(trials) == len(ids)
        assert trials.count(trials[0]) == 1
        assert [*reversed(trials)] == trials[::-1]
        self.seen.append((hook, ids))

    def on_step_begin(self, iteration: int, trials: list[Trial], **info: Any) -> None:
        if trials:  # the first step starts before any trial exists
            self._record("step", trials)

    def on_trial_result(
        self,
        iteration: int,
        trials: list[Trial],
        trial: Trial,
        result: dict[str, Any],
        **info: Any,
    ) -> None:
        assert type(result) is dict
        assert trial in trials
        self._record("result", trials)

    def on_experiment_end(self, trials: list[Trial], **info: Any) -> None:
        self._record("end", trials)


def test_a_ray_style_callback_gets_every_trial_as_a_list(tmp_path: Path) -> None:
    callback = ListsTrials()
    created = three_trials_reporting_twice(tmp_path, callback)
    assert sorted(created) == created
    assert callback.seen[-1] == ("end", created)
    hooks = {hook for hook, _ in callback.seen}
    assert hooks == {"step", "result", "end"}
    assert all(ids == created[: len(ids)] for _, ids in callback.seen)
    assert sum(hook == "result" for hook, _ in callback.seen) == 6


class KeepsTheList(tunecore.Callback):
    """Keeps the `trials` of the first result, as a user may (Ray hands
    its controller's own list to every hook)."""

    def __init__(self) -> None:
        self.kept: list[Trial] | None = None
        self.same_list: list[bool] = []
        self.sorted_copies: list[list[str]] = []

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: dict[str, Any]
    ) -> None:
        if self.kept is None:
            self.kept = trials
        self.same_list.append(trials is self.kept)
        assert trials.index(trial) == [t.trial_id for t in trials].index(trial.trial_id)
        by_id_descending = sorted(trials, key=lambda t: t.trial_id, reverse=True)
        self.sorted_copies.append([t.trial_id for t in by_id_descending])


def test_trials_is_one_list_across_calls_kept_current_and_sorting_a_copy_leaves_it(
    tmp_path: Path,
) -> None:
    callback = KeepsTheList()
    created = sorted(three_trials_reporting_twice(tmp_path, callback))
    assert callback.same_list == [True] * 6
    assert callback.kept is not None
    assert [trial.trial_id for trial in callback.kept] == created  # grew with the run
    assert callback.sorted_copies[-1] == created[::-1]


class ReadsInAnOverride(LoggerCallback):
    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: dict[str, Any]
    ) -> None:
        super().on_trial_result(iteration, trials, trial, result)


class DuckTyped:
    def on_step_end(self, iteration: int, trials: list[Trial]) -> None:
        print(trials)


HOOKS = ("on_step_begin", "on_step_end", "on_trial_result", "on_trial_complete")


def test_only_a_hook_tunecore_marks_as_ignoring_trials_skips_the_list() -> None:
    # The base hooks, the loggers' and the default result files' never read it ...
    for quiet in (tunecore.Callback(), ResultFiles(), CallbackList([ResultFiles()])):
        assert not any(reads_trials(quiet, hook) for hook in HOOKS), quiet
    # ... a user's override that hands it on may, and so may a duck-typed callback's.
    assert reads_trials(ReadsInAnOverride(), "on_trial_result")
    assert not reads_trials(ReadsInAnOverride(), "on_trial_complete")
    assert reads_trials(DuckTyped(), "on_step_end")
    duck: Any = DuckTyped()  # Ray calls a callback's hooks without checking its class
    assert reads_trials(CallbackList([ResultFiles(), duck]), "on_step_end")
    assert not reads_trials(CallbackList([ResultFiles(), duck]), "on_step_begin")


class PrintsResults(tunecore.Callback):
    """The common user callback: Ray's signature, `trials` never looked at."""

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: dict[str, Any], **info: Any
    ) -> None:
        print(trial, result)


def test_every_hook_a_user_defines_gets_the_list_brought_up_to_date() -> None:
    # Kept up to date by the trials that changed, the list costs a hook
    # that never reads it next to nothing: no guessing which hooks read it.
    assert reads_trials(PrintsResults(), "on_trial_result")
    assert reads_trials(CallbackList([ResultFiles(), PrintsResults()]), "on_trial_result")
    assert not reads_trials(PrintsResults(), "on_trial_complete")  # Callback's own


class MessesWithTheList(tunecore.Callback):
    """Changes the list it is given, which Ray's controller would take as its
    own order: tunecore's next state shows the trials as they are again."""

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: dict[str, Any]
    ) -> None:
        trials.reverse()
        trials.append(trials[0])
        trials.insert(0, "not a trial")  # type: ignore[arg-type]

    def on_experiment_end(self, trials: list[Trial]) -> None:
        self.at_end = [trial.trial_id for trial in trials]


def test_a_list_changed_by_a_callback_is_put_right_at_the_next_state(tmp_path: Path) -> None:
    callback = MessesWithTheList()
    created = sorted(three_trials_reporting_twice(tmp_path, callback))
    assert callback.at_end == created
