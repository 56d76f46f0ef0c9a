"""The user-facing session calls: they belong to the thread tunecore runs a
function in, and refuse to work anywhere else."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.shell.trainable.conftest import MakeFunction
from tunecore.model import JsonDict
from tunecore.shell.trainable import (
    Checkpoint,
    TrainableError,
    TrialContext,
    checkpoint_dir,
    get_checkpoint,
    get_context,
    report,
)


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("report", lambda: report({"x": 1})),
        ("get_checkpoint", get_checkpoint),
    ],
)
def test_report_and_get_checkpoint_in_a_process_running_no_trial_warn_and_return_none(
    name: str, call: Callable[[], object]
) -> None:
    """Ray Tune's `report` and `get_checkpoint` warn and return None outside
    Tune: a script calling its training function directly (a final model
    trained with the best config) runs on."""
    with pytest.warns(UserWarning, match=rf"{name}\(\) is meant to be called inside"):
        assert call() is None


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("get_context", get_context),
        ("checkpoint_dir", lambda: checkpoint_dir(1).__enter__()),
    ],
)
def test_session_calls_outside_a_trial_are_refused(name: str, call: Callable[[], object]) -> None:
    with pytest.raises(RuntimeError) as refused:
        call()
    assert str(refused.value) == (
        f"{name}() must be called inside a function run by tunecore, from the thread "
        "tunecore runs it in or one it started; it was called outside any trial"
    )


def test_a_thread_the_function_starts_reports_for_its_trial(make_function: MakeFunction) -> None:
    """Ray Tune's session is the process's: a report from a thread the
    function started is the trial's result, in order with the function's."""

    def fn(config: JsonDict) -> None:
        helper = threading.Thread(target=lambda: report({"from": "thread"}))
        helper.start()
        helper.join()
        report({"from": "function"})

    trainable = make_function(fn)
    assert [trainable.train()["from"], trainable.train()["from"]] == ["thread", "function"]


def test_a_thread_a_finished_trial_left_behind_never_reports_into_the_next(
    make_function: MakeFunction,
) -> None:
    errors: list[str] = []
    go = threading.Event()
    left: list[threading.Thread] = []

    def first(config: JsonDict) -> None:
        def late() -> None:
            go.wait()
            _record(errors, lambda: report({"late": 1}))

        left.append(threading.Thread(target=late))
        left[0].start()

    def second(config: JsonDict) -> None:
        go.set()
        left[0].join()
        report({"errors": len(errors)})

    make_function(first).train()
    assert make_function(second, trial_id="t2").train()["errors"] == 1
    assert "must be called inside a function run by tunecore" in errors[0]


def test_a_thread_is_no_trials_while_several_run_in_the_process(
    make_function: MakeFunction,
) -> None:
    """The in-process executor runs trials side by side: whose a new thread
    is cannot be told, so it reports for none."""
    errors: list[str] = []

    def fn(config: JsonDict) -> None:
        report({})
        helper = threading.Thread(target=lambda: _record(errors, lambda: report({"x": 1})))
        helper.start()
        helper.join()
        report({"errors": len(errors)})

    first, second = make_function(fn, trial_id="a"), make_function(fn, trial_id="b")
    first.train()
    second.train()  # both now run, parked in their first report
    assert first.train()["errors"] == 1
    assert "must be called inside a function run by tunecore" in errors[0]


def _record(errors: list[str], call: Callable[[], object]) -> None:
    try:
        call()
    except RuntimeError as exc:
        errors.append(str(exc))


def test_get_context_names_the_trial(make_function: MakeFunction) -> None:
    seen: list[TrialContext] = []

    def fn(config: JsonDict) -> None:
        seen.append(get_context())
        report({})

    trainable = make_function(fn, trial_id="trial_7")
    trainable.train()
    (context,) = seen
    assert (context.trial_id, context.trial_name) == ("trial_7", "trial_7_name")
    assert Path(context.trial_dir).name == "trial_7"


def test_sessions_of_two_trials_in_one_process_stay_apart(make_function: MakeFunction) -> None:
    def fn(config: JsonDict) -> None:
        while True:
            report({"trial": get_context().trial_id, "x": config["x"]})

    first = make_function(fn, {"x": 1}, trial_id="a")
    second = make_function(fn, {"x": 2}, trial_id="b")
    for _ in range(3):
        one, two = first.train(), second.train()
        assert (one["trial"], one["x"], two["trial"], two["x"]) == ("a", 1, "b", 2)


def test_report_refuses_a_checkpoint_that_is_not_a_checkpoint(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    def fn(config: JsonDict) -> None:
        report({"x": 1}, checkpoint=str(tmp_path))  # type: ignore[arg-type]

    with pytest.raises(
        TrainableError,
        match=r"takes a Checkpoint \(Checkpoint.from_directory\(path\)\), got a builtins.str",
    ):
        make_function(fn).train()


def test_checkpoint_dir_refuses_a_negative_step(make_function: MakeFunction) -> None:
    def fn(config: JsonDict) -> None:
        with checkpoint_dir(-1):
            pass

    with pytest.raises(TrainableError, match=r"checkpoint_dir\(step\)=-1 is invalid"):
        make_function(fn).train()


def test_a_checkpoint_is_a_frozen_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "c").mkdir()
    monkeypatch.chdir(tmp_path)
    checkpoint = Checkpoint.from_directory("c")
    assert checkpoint.path == str(tmp_path / "c")
    with pytest.raises(AttributeError):
        checkpoint.path = "elsewhere"  # type: ignore[misc]
