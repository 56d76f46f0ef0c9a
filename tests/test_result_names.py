"""`tunecore.result` names the keys tunecore actually writes."""

from __future__ import annotations

from pathlib import Path

import tunecore
from tunecore import RunConfig, Tuner
from tunecore import result as names


def train(config: dict[str, object]) -> None:
    tunecore.report({names.MEAN_LOSS: 0.5})


def test_the_automatic_keys_are_the_ones_in_every_result(tmp_path: Path) -> None:
    run = RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process")
    (result,) = Tuner(train, run_config=run).fit()
    for key in (
        names.TRAINING_ITERATION,
        names.TIME_THIS_ITER_S,
        names.TIME_TOTAL_S,
        names.TIMESTAMP,
        names.PID,
        names.HOSTNAME,
        names.TRIAL_ID,
        names.DONE,
    ):
        assert key in result.metrics, key
    assert result.metrics[names.MEAN_LOSS] == 0.5
    for filename in (names.EXPR_PARAM_FILE, names.EXPR_RESULT_FILE, names.EXPR_PROGRESS_FILE):
        assert (result.path / filename).is_file()
