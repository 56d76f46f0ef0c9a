"""On Ray too, a result the event log cannot store (issue 10, item 4)
fails only the trial that reported it, at its `report()` in the worker."""

from __future__ import annotations

import sys
from pathlib import Path

import cloudpickle
import pytest

import tunecore
from tunecore import RunConfig, Tuner
from tunecore.model import TrialStatus
from tunecore.shell.replay import replay

pytestmark = pytest.mark.usefixtures("ray_cluster")


def reports_a_huge_int(config: dict[str, object]) -> None:
    if config["which"] == "bad":
        tunecore.report({"v": 10**30})
    tunecore.report({"v": 1})


def test_on_ray_an_unstorable_result_fails_only_its_trial(tmp_path: Path) -> None:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray workers lack tests/
    results = Tuner(
        reports_a_huge_int,
        param_space={"which": tunecore.grid_search(["bad", "good"])},
        run_config=RunConfig(name="unstorable", storage_path=str(tmp_path), verbose=0),
    ).fit()
    found = {result.config["which"]: result for result in results}
    assert found["good"].status is TrialStatus.TERMINATED
    assert found["good"].metrics["v"] == 1
    assert found["bad"].status is TrialStatus.ERROR
    error = str(found["bad"].error)
    assert "report(metrics)['v']=1000000000000000000000000000000 cannot be stored" in error
    assert replay(tmp_path / "unstorable").state.done
