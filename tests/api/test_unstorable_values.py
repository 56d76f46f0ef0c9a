"""Values the event log cannot store (issue 10, item 4): integers beyond
64 bits, text with a lone surrogate, nesting beyond 100, a result larger
than a record of the log. Each fails only
the trial that reported it, at its `report()`, with the key and the value
in its error; the experiment goes on, its results build, and a resume
works. A param space holding one is refused when the Tuner is made.
In-process executor throughout."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

import tunecore
from tunecore import RunConfig, Tuner
from tunecore.model import JsonValue, Resources, TrialStatus
from tunecore.model.storable import UnstorableValueError
from tunecore.shell.inbox import Inbox
from tunecore.shell.loop import MAX_ERROR_CHARS
from tunecore.shell.replay import replay


def nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth - 1):
        value = [value]
    return value


SURROGATE = "\ud800"
BAD_RESULTS: dict[str, tuple[dict[str, object], str]] = {
    "int_2_100": ({"v": 10**30}, "['v']=1000000000000000000000000000000"),
    "int_minus_2_64": ({"v": -(2**64)}, "['v']=-18446744073709551616"),
    "int_1e23": ({"v": 100000000000000000000000}, "['v']=100000000000000000000000"),
    "huge_int": ({"v": 10**5000}, "['v']=<an integer of about 5001 digits>"),
    "surrogate_value": ({"v": SURROGATE}, "['v']='\\ud800'"),
    "surrogate_key": ({SURROGATE: 1}, "['\\ud800']='\\ud800'"),
    "deep_in_dict": ({"v": {"w": [1, 2**64]}}, "['v']['w'][1]=18446744073709551616"),
    "nested_500": ({"v": nested(500)}, "nested at most 100 deep"),
    "too_large": (
        {"v": "x" * (17 << 20)},
        "=<a dict of 1 items> cannot be stored: expected a result of at most",
    ),
    "nested_100000": ({"v": {"w": nested(100_000)}}, "report(metrics)['v']['w'][0][0]"),
}


def reports(config: Mapping[str, JsonValue]) -> None:
    """Trial "bad" reports its bad result first; "good" two plain ones."""
    if config["which"] == "bad":
        tunecore.report(BAD_RESULTS[str(config["case"])][0])
    tunecore.report({"v": 1})
    tunecore.report({"v": 2})


def settings(tmp_path: Path, name: str = "unstorable") -> RunConfig:
    return RunConfig(name=name, storage_path=str(tmp_path), verbose=0, executor="in_process")


def by_which(results: tunecore.ResultGrid) -> dict[str, tunecore.Result]:
    return {str(result.config["which"]): result for result in results}


@pytest.mark.parametrize("case", sorted(BAD_RESULTS))
def test_an_unstorable_result_fails_only_its_trial_and_a_resume_works(
    tmp_path: Path, case: str
) -> None:
    space = {"which": tunecore.grid_search(["bad", "good"]), "case": case}
    results = by_which(Tuner(reports, param_space=space, run_config=settings(tmp_path)).fit())

    bad, good = results["bad"], results["good"]
    assert good.status is TrialStatus.TERMINATED
    assert good.metrics["v"] == 2
    assert bad.status is TrialStatus.ERROR
    assert bad.error is not None
    shown = BAD_RESULTS[case][1]
    assert "report(metrics)" in str(bad.error)
    assert "cannot be stored" in str(bad.error)
    assert shown in str(bad.error)
    assert shown in (Path(bad.path) / "error.txt").read_text(encoding="utf-8")
    assert "v" not in bad.metrics  # the bad result never became one

    directory = tmp_path / "unstorable"
    replay(directory)  # the log holds nothing unreadable: a clean, verified replay
    again = by_which(Tuner.restore(str(directory), reports).fit())
    assert again["bad"].status is TrialStatus.ERROR
    assert again["good"].metrics["v"] == 2
    assert len(tunecore.ResultGrid.from_path(directory)) == 2


def reports_long_text(config: Mapping[str, JsonValue]) -> None:
    tunecore.report({"text": "x" * 200_000})
    tunecore.report({"text": "y"})


def test_a_long_text_in_a_result_is_kept_and_a_resume_reads_it_back(tmp_path: Path) -> None:
    """A cell of progress.csv over the csv module's 128 KiB default made
    every resume crash while checking the table against the log."""
    [result] = Tuner(reports_long_text, run_config=settings(tmp_path)).fit()
    frame = result.metrics_dataframe
    assert frame is not None
    assert frame["text"].str.len().tolist() == [200_000, 1]
    [again] = Tuner.restore(str(tmp_path / "unstorable"), reports_long_text).fit()
    assert again.metrics["text"] == "y"
    assert len(tunecore.ResultGrid.from_path(tmp_path / "unstorable")) == 1


def catches(config: Mapping[str, JsonValue]) -> None:
    """The error comes at the `report()` call, where the function can catch it."""
    try:
        tunecore.report({"v": 10**30})
    except ValueError as error:
        tunecore.report({"caught": str(error)})


def test_the_function_gets_the_error_at_its_report_call(tmp_path: Path) -> None:
    [result] = Tuner(catches, run_config=settings(tmp_path)).fit()
    assert result.status is TrialStatus.TERMINATED
    caught = result.metrics["caught"]
    assert isinstance(caught, str)
    assert caught.startswith("report(metrics)['v']=1000000000000000000000")


class Steps(tunecore.Trainable):
    def step(self) -> dict[str, object]:
        return {"v": SURROGATE if self.config["which"] == "bad" else 1, "done": True}


def test_a_class_trainable_step_result_is_checked_too(tmp_path: Path) -> None:
    space = {"which": tunecore.grid_search(["bad", "good"])}
    results = by_which(Tuner(Steps, param_space=space, run_config=settings(tmp_path)).fit())
    assert results["good"].status is TrialStatus.TERMINATED
    assert results["bad"].error is not None
    assert "Steps.step()['v']='\\ud800' cannot be stored" in str(results["bad"].error)


def raises_a_surrogate(config: Mapping[str, JsonValue]) -> None:
    if config["which"] == "bad":
        raise ValueError(f"broken {SURROGATE} text")
    tunecore.report({"v": 1})


def test_an_error_whose_text_is_not_utf8_fails_only_its_trial(tmp_path: Path) -> None:
    space = {"which": tunecore.grid_search(["bad", "good"])}
    tuner = Tuner(raises_a_surrogate, param_space=space, run_config=settings(tmp_path))
    results = by_which(tuner.fit())
    assert results["good"].metrics["v"] == 1
    assert results["bad"].error is not None
    assert "ValueError: broken \\ud800 text" in str(results["bad"].error)
    replay(tmp_path / "unstorable")
    assert len(Tuner.restore(str(tmp_path / "unstorable"), raises_a_surrogate).fit()) == 2


def raises_a_huge_message(config: Mapping[str, JsonValue]) -> None:
    if config["which"] == "bad":
        raise ValueError("x" * (17 << 20))  # more than a record of the log holds
    tunecore.report({"v": 1})


def test_an_error_too_long_for_the_log_is_cut_and_fails_only_its_trial(tmp_path: Path) -> None:
    space = {"which": tunecore.grid_search(["bad", "good"])}
    tuner = Tuner(raises_a_huge_message, param_space=space, run_config=settings(tmp_path))
    results = by_which(tuner.fit())
    assert results["good"].metrics["v"] == 1
    assert results["bad"].error is not None
    error = str(results["bad"].error)
    assert error.endswith(f"[cut at {MAX_ERROR_CHARS} characters]")
    assert len(error) < 2 * MAX_ERROR_CHARS
    replay(tmp_path / "unstorable")


def big_curve(config: dict[str, JsonValue], iteration: int) -> tuple[dict[str, JsonValue], float]:
    return {"v": 10**30 if config["which"] == "bad" else iteration}, 1.0


def test_the_driver_turns_a_result_it_cannot_log_into_a_failure_of_its_trial(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The driver's own guard, for results no worker checked (here a
    simulation's): the log's encoding refuses the event, nothing of it is
    written, and its trial fails instead."""
    space = {"which": tunecore.grid_search(["bad", "good"])}
    with caplog.at_level(logging.ERROR):
        results = tunecore.simulate(
            big_curve,
            param_space=space,
            run_config=RunConfig(name="simulated", storage_path=str(tmp_path), verbose=0),
            cluster=Resources(cpu=2),
            max_iterations=3,
        )
    found = by_which(results)
    assert found["good"].metrics["v"] == 3
    assert found["bad"].error is not None
    error = str(found["bad"].error)
    assert "ResultReported of this trial could not be logged" in error
    assert "result['v']=1000000000000000000000000000000 cannot be stored" in error
    assert "could not be logged" in caplog.text
    assert replay(tmp_path / "simulated").state.done


@pytest.mark.parametrize(
    ("space", "named"),
    [
        ({"x": 10**30}, "param_space['x']=1000000000000000000000000000000"),
        ({"x": {"y": -(2**64)}}, "param_space['x']['y']=-18446744073709551616"),
        ({"x": tunecore.choice([1, 10**30])}, "param_space['x'].categories[1]="),
        ({"x": tunecore.grid_search([SURROGATE])}, "param_space['x'].values[0]='\\ud800'"),
        ({SURROGATE: 1}, "param_space['\\ud800']='\\ud800'"),
        ({"x": nested(500)}, "nested at most 100 deep"),
    ],
)
def test_a_param_space_the_log_cannot_store_is_refused_naming_the_key(
    tmp_path: Path, space: dict[str, object], named: str
) -> None:
    with pytest.raises(UnstorableValueError, match="cannot be stored") as raised:
        Tuner(reports, param_space=space, run_config=settings(tmp_path))
    assert named in str(raised.value)
    assert not (tmp_path / "unstorable").exists()


def test_settings_the_log_cannot_store_are_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    by_metric = Tuner(
        reports,
        tune_config=tunecore.TuneConfig(metric=SURROGATE, mode="min"),
        run_config=settings(tmp_path, "by_metric"),
    )
    with pytest.raises(UnstorableValueError, match=re.escape("config.metric='\\ud800'")):
        by_metric.fit()
    stop = {SURROGATE: 1}
    run_config = RunConfig(name="by_stop", storage_path=str(tmp_path), verbose=0, stop=stop)
    by_stop = Tuner(reports, run_config=run_config)
    with pytest.raises(UnstorableValueError, match=re.escape("stopping_criterion['\\ud800']")):
        by_stop.fit()
    assert list(tmp_path.glob("*/events.log")) == []


def test_an_inbox_request_the_log_cannot_store_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = Inbox(tmp_path)
    inbox.directory.mkdir()
    written = inbox.directory / "00000000000000000001-1-000000.json"
    written.write_text(json.dumps({"type": "AddTrialRequest", "config": {"x": 10**23}}))
    with caplog.at_level(logging.WARNING):
        assert inbox.take(at=1.0) == []
    assert "config['x']=100000000000000000000000 cannot be stored" in caplog.text
    assert not written.exists()
