"""`Result.error` as Ray Tune gives it: an exception (a `TuneError`, also
of the built-in type the trial raised), whose text is error.txt's."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import tunecore
from tunecore import ResultGrid, RunConfig, TuneError, Tuner
from tunecore.api.errors import TrialError


class OwnError(Exception):
    """An exception class of the user's own."""


def fails(config: dict[str, str]) -> None:
    tunecore.report({"loss": 1.0})
    kind = config["kind"]
    if kind == "value":
        raise ValueError("bad value 7")
    if kind == "key":
        raise KeyError("missing")
    if kind == "own":
        raise OwnError("mine")


def run(tmp_path: Path) -> dict[str, tunecore.Result]:
    grid = Tuner(
        fails,
        param_space={"kind": tunecore.grid_search(["value", "key", "own", "none"])},
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    ).fit()
    return {str(r.config["kind"]): r for r in grid}


def test_a_failed_trials_error_is_an_exception_of_its_builtin_type(tmp_path: Path) -> None:
    results = run(tmp_path)
    # object: what a trial raised is not a type the annotation can know
    value: object = results["value"].error
    key: object = results["key"].error
    own: object = results["own"].error
    assert results["none"].error is None
    for error in (value, key, own):
        assert isinstance(error, TrialError)
        assert isinstance(error, TuneError)
    assert isinstance(value, ValueError)
    assert isinstance(key, KeyError)
    assert not isinstance(own, OwnError)  # a class of the user's own is not rebuilt
    assert "ValueError: bad value 7" in str(value).splitlines()
    assert "KeyError: 'missing'" in str(key).splitlines()  # the text, not KeyError's repr
    error_txt = (Path(results["value"].path) / "error.txt").read_text()
    assert str(value) in error_txt
    assert isinstance(value, TrialError)
    with pytest.raises(ValueError, match="bad value 7"):
        raise value


def test_errors_lists_them_and_they_survive_pickling(tmp_path: Path) -> None:
    results = run(tmp_path)
    grid = ResultGrid.from_path(Path(results["value"].path).parent)
    assert sorted(type(e).__name__ for e in grid.errors) == [
        "TrialError",
        "TrialError[KeyError]",
        "TrialError[ValueError]",
    ]
    for error in grid.errors:
        copy = pickle.loads(pickle.dumps(error))
        assert (type(copy), str(copy)) == (type(error), str(error))


def test_an_error_without_a_traceback_is_a_tune_error_only() -> None:
    from tunecore.api.errors import trial_error  # noqa: PLC0415

    error = trial_error("the trial requested 64 CPUs; the cluster has 2")
    assert type(error) is TrialError
    assert str(error) == "the trial requested 64 CPUs; the cluster has 2"
