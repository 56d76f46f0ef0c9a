"""What a callback written with Ray's signatures (`trials: List[Trial]`,
`result: Dict`) is handed on a real run: a real list of every trial in
creation order, whose list operations all see the trials, and a dict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tunecore
from tunecore.model import JsonDict
from tunecore.shell.trial_view import Trial


def reports_twice(config: JsonDict) -> None:
    import tunecore  # noqa: PLC0415 - the trainable's own import

    for step in range(2):
        tunecore.report({"loss": float(step)})


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
    grid = tunecore.Tuner(
        reports_twice,
        param_space={"x": tunecore.grid_search([1, 2, 3])},
        run_config=tunecore.RunConfig(
            storage_path=str(tmp_path), name="lists", executor="in_process", callbacks=[callback]
        ),
    ).fit()
    created = [str(result.metrics["trial_id"]) for result in grid]
    assert sorted(created) == created
    assert callback.seen[-1] == ("end", created)
    hooks = {hook for hook, _ in callback.seen}
    assert hooks == {"step", "result", "end"}
    assert all(ids == created[: len(ids)] for _, ids in callback.seen)
    assert sum(hook == "result" for hook, _ in callback.seen) == 6
