"""An idle experiment's event log (`core.experiment.idle`), from `Tuner.fit()`.

The trial reports, then waits inside its step for a gate the driver's
callback opens some loop steps after that result: rounds that bring no
event. They
are steps for the callbacks as before, but the log gets no `Tick` for
them, unless the experiment reads its run time (the Tick that ends the
time budget is logged, and replay computes the same end).
"""

from __future__ import annotations

import threading
from pathlib import Path

import tunecore
from tunecore import Callback, RunConfig, TuneConfig, Tuner
from tunecore.model import (
    ExperimentEvent,
    ExperimentStopRequested,
    ResultReported,
    Tick,
    TrialStatus,
)
from tunecore.shell.eventlog import read_log
from tunecore.shell.trial_view import Trial

IDLE_STEPS = 3
"""Loop steps from the one of the first result until the gate opens: the
ones after it bring no event."""


class Gate(Callback):
    """Opens `gate` once `steps` steps ended after the first result
    (never, when `steps` is None), and at the experiment's end."""

    def __init__(self, gate: threading.Event, steps: int | None) -> None:
        self.gate = gate
        self.steps = steps
        self.after_result = 0
        self.reported = False

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: dict[str, object]
    ) -> None:
        self.reported = True

    def on_step_end(self, iteration: int, trials: list[Trial]) -> None:
        if self.reported:
            self.after_result += 1
        if self.after_result == self.steps:
            self.gate.set()

    def on_experiment_end(self, trials: list[Trial]) -> None:
        self.gate.set()


def run(
    tmp_path: Path, steps: int | None, budget: float | None
) -> tuple[Gate, list[ExperimentEvent]]:
    gate = threading.Event()

    def waits(config: dict[str, object]) -> None:
        tunecore.report({"score": 0.0})
        gate.wait()
        tunecore.report({"score": 1.0})

    callback = Gate(gate, steps)
    Tuner(
        waits,
        tune_config=TuneConfig(time_budget_s=budget),
        run_config=RunConfig(
            name="idle",
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            callbacks=[callback],
        ),
    ).fit()
    return callback, list(read_log(tmp_path / "idle").events)


def test_idle_rounds_log_no_tick_but_are_steps(tmp_path: Path) -> None:
    callback, events = run(tmp_path, IDLE_STEPS, None)
    assert callback.after_result >= IDLE_STEPS
    scores = [e.result.get("score") for e in events if isinstance(e, ResultReported)]
    assert scores[:2] == [0.0, 1.0]
    assert [e for e in events if isinstance(e, Tick)] == []


def test_the_tick_that_ends_the_time_budget_is_logged(tmp_path: Path) -> None:
    """The gate never opens before the end: only the budget ends the
    experiment, on the one Tick logged (the heartbeat, 10 s, is not
    reached), and the replayed experiment stops there too."""
    budget = 2.0
    _, events = run(tmp_path, None, budget)
    ticks = [e for e in events if isinstance(e, Tick)]
    assert len(ticks) == 1
    assert ticks[0].at - events[0].at >= budget
    assert not any(isinstance(e, ExperimentStopRequested) for e in events)
    replayed = tunecore.replay(tmp_path / "idle")
    assert replayed.state.stopping == f"the time budget of {budget:g} s is used up"
    (trial,) = replayed.state.trials.values()
    assert trial.status is TrialStatus.TERMINATED
