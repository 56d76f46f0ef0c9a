"""An experiment logged before stoppers heard a function trainable's end
(`ExperimentConfig.end_repeats_result`) resumes to the decisions the
tunecore that wrote it made: `tests/golden/crashed_v1_end_stoppers`
was killed in its second trial, after the first trial's function had
returned, and `expected.json` holds what that tunecore's resume gave (see
`tests/golden/make_golden_log_end_stoppers.py`). Had the resumed run's
`ExperimentPlateauStopper(top=2)` heard the first trial's end, it would
have stopped the experiment after it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import tunecore
from tests.golden.make_golden_log_end_stoppers import Offsets, stopper_summary, stoppers, train
from tunecore import Tuner

CRASHED = Path(__file__).parents[1] / "golden" / "crashed_v1_end_stoppers"


def test_an_old_experiment_resumes_with_its_stoppers_deaf_to_ends(tmp_path: Path) -> None:
    directory = tmp_path / "golden"
    shutil.copytree(CRASHED, directory)
    expected = json.loads((directory / "expected.json").read_text())
    before = tunecore.replay(directory).state
    assert before.config.end_repeats_result is None  # written before the field
    assert sum(t.has_result for t in before.trials.values()) == 2

    Tuner.restore(str(directory), train, search_alg=Offsets(), stop=stoppers()).fit()

    state = tunecore.replay(directory).state
    trials = state.trials.values()
    assert sorted(t.status.value for t in trials) == expected["statuses"]
    iterations = sorted(int(str(t.last_result["training_iteration"])) for t in trials)
    assert iterations == expected["iterations"]
    assert stopper_summary(state) == expected["stopper"]
