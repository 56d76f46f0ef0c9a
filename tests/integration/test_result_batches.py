"""How results travel from a Ray worker to the driver: one round trip per
report where a decision may depend on other trials, batches where every
decision is the trial's own stopping criterion (the run-ahead), or the
user's opt-in buffer; and a trial started on a reused actor."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

import tunecore
from tunecore import FailureConfig, RunConfig, TuneConfig, Tuner
from tunecore.core.results import is_end_marker
from tunecore.model import ResultReported, TrialStatus
from tunecore.schedulers import ASHAScheduler, MedianStoppingRule
from tunecore.shell.eventlog import read_log

pytestmark = pytest.mark.usefixtures("ray_cluster")

STEPS = 300


def counted_steps(config: dict[str, float]) -> None:
    """Writes a line before each report, so the test sees how far the
    function really ran, not only what reached the driver."""
    steps = os.path.join(tunecore.get_context().get_trial_dir(), "steps.txt")
    for step in range(1, STEPS + 1):
        with open(steps, "a") as file:
            file.write(f"{step}\n")
        tunecore.report({"loss": config["x"] + 1.0 / step, "step": step})


def fails_when_told(config: dict[str, float]) -> None:
    if config["x"] == 2:
        raise ValueError("two is not allowed")
    tunecore.report({"loss": config["x"]})


def fit(tmp_path: Path, trainable: object, space: dict[str, object], **options: object) -> Path:
    run_keys = {"stop", "failure_config"}
    Tuner(
        trainable,  # type: ignore[arg-type]
        param_space=space,
        tune_config=TuneConfig(**{k: v for k, v in options.items() if k not in run_keys}),  # type: ignore[arg-type]
        run_config=RunConfig(
            name="exp",
            storage_path=str(tmp_path),
            verbose=0,
            **{k: v for k, v in options.items() if k in run_keys},  # type: ignore[arg-type]
        ),
    ).fit()
    return tmp_path / "exp"


def arrivals(experiment: Path) -> dict[str, list[float]]:
    """When the driver got each trial's results (a batch shares its time)."""
    times: dict[str, list[float]] = {}
    for event in read_log(experiment, quiet=True).events:
        if isinstance(event, ResultReported) and not is_end_marker(event.result):
            times.setdefault(event.trial_id, []).append(event.at)
    return times


def steps_run(experiment: Path) -> dict[str, int]:
    return {
        directory.name: len((directory / "steps.txt").read_text().splitlines())
        for directory in experiment.iterdir()
        if (directory / "steps.txt").is_file()
    }


def test_fifo_runs_ahead_in_batches_and_stops_exactly_at_the_criterion(tmp_path: Path) -> None:
    experiment = fit(
        tmp_path,
        counted_steps,
        {"x": tunecore.grid_search([1.0, 2.0])},
        stop={"step": 120},
    )
    grid = tunecore.ResultGrid.from_path(experiment)
    assert [r.metrics["step"] for r in grid] == [120, 120]
    assert [len(r.history or []) for r in grid] == [120, 120]
    # The worker ended its batch where the criterion said stop: the
    # function never took a step the driver did not ask for.
    assert sorted(steps_run(experiment).values()) == [120, 120]
    # ...and the results came in batches, not one round trip each.
    for times in arrivals(experiment).values():
        assert len(times) == 120
        assert len(set(times)) < 60


def test_under_asha_a_worker_runs_ahead_only_to_the_next_milestone(tmp_path: Path) -> None:
    experiment = fit(
        tmp_path,
        counted_steps,
        {"x": tunecore.grid_search([float(x) for x in range(8)])},
        metric="loss",
        mode="min",
        scheduler=ASHAScheduler(max_t=STEPS, grace_period=2, reduction_factor=2),
    )
    grid = tunecore.ResultGrid.from_path(experiment)
    reported = {r.path.name: len(r.history or []) for r in grid}
    assert any(count < STEPS for count in reported.values())  # ASHA stopped some early
    # A stopped trial's function went no further than the result it was stopped at.
    assert steps_run(experiment) == reported
    # Between its milestones (2, 4, 8, ..., 256) ASHA can only continue:
    # results there came in batches, each ending by the next milestone.
    milestones = [2**k for k in range(1, 9)]
    for times in arrivals(experiment).values():
        for milestone in milestones:
            if milestone < len(times):  # the batch went no further than it
                assert times[milestone - 1] != times[milestone]
        if len(times) >= 64:
            assert len(set(times)) < len(times) / 4


def test_the_opt_in_buffer_batches_under_a_scheduler_that_decides_on_every_result(
    tmp_path: Path,
) -> None:
    experiment = fit(
        tmp_path,
        counted_steps,
        {"x": 1.0},
        metric="loss",
        mode="min",
        scheduler=MedianStoppingRule(grace_period=1),  # no horizon: no run-ahead
        result_buffer_length=16,
    )
    (times,) = arrivals(experiment).values()
    assert len(times) == STEPS
    assert max(Counter(times).values()) <= 16
    assert len(set(times)) < STEPS // 4


def test_with_a_buffer_the_run_ahead_still_wins_where_the_core_allows_it(tmp_path: Path) -> None:
    """ASHA gives a horizon: the batches run to the next milestone, larger
    than the buffer, and none goes past a milestone (no decision late)."""
    experiment = fit(
        tmp_path,
        counted_steps,
        {"x": 1.0},
        metric="loss",
        mode="min",
        scheduler=ASHAScheduler(max_t=STEPS, grace_period=2, reduction_factor=2),
        result_buffer_length=16,
    )
    (times,) = arrivals(experiment).values()
    assert len(times) == STEPS
    assert max(Counter(times).values()) > 16
    for milestone in [2**k for k in range(1, 9)]:
        assert times[milestone - 1] != times[milestone]


@pytest.mark.parametrize("batches", [False, True], ids=["one-per-report", "run-ahead"])
def test_a_trial_failing_on_a_reused_actor_fails_alone_with_its_traceback(
    tmp_path: Path, batches: bool
) -> None:
    options: dict[str, object] = {} if batches else {"metric": "loss", "mode": "min"}
    if not batches:  # ASHA decides on results: one report, one round trip
        options["scheduler"] = ASHAScheduler(max_t=10, grace_period=1)
    experiment = fit(
        tmp_path,
        fails_when_told,
        {"x": tunecore.grid_search([1, 2, 3, 4])},
        max_concurrent_trials=1,  # every trial after the first starts on a reused actor
        failure_config=FailureConfig(max_failures=0),
        **options,
    )
    grid = tunecore.ResultGrid.from_path(experiment)
    statuses = {r.config["x"]: r.status for r in grid}
    assert statuses == {
        1: TrialStatus.TERMINATED,
        2: TrialStatus.ERROR,
        3: TrialStatus.TERMINATED,
        4: TrialStatus.TERMINATED,
    }
    (failed,) = [r for r in grid if r.error is not None]
    assert "two is not allowed" in str(failed.error)
    assert "fails_when_told" in str(failed.error)
