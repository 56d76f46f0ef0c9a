"""Writes `tests/golden/log_v1_pbt/`: a second log of format 1 that every
later tunecore must keep reading (`tests/test_golden_log.py`), for the
records the first (`log_v1`) has none of: PBT's exploits (a trial's spec
changes and it restores another trial's checkpoint), values a
`sample_from` function drew, resources worked out from a trial's config,
and the user's stopper ending a trial. Like `make_golden_log.py`, it was
run once and its output is checked in:

    python -c "from pathlib import Path; from tests.golden.make_golden_log_pbt import main;
               main(Path('tests/golden/log_v1_pbt'))"
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import tunecore
from tests.golden.recorded import keep_log, write_expected
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import JsonValue
from tunecore.schedulers import PopulationBasedTraining


def train(config: dict[str, JsonValue]) -> None:
    """A score that grows by `rate` per step, kept in the checkpoint."""
    score = 0.0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            score = float(Path(directory, "score").read_text())
    rate = float(str(config["rate"]))
    while True:
        score += rate
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "score").write_text(str(score))
            tunecore.report(
                {"score": score, "offset": config["offset"]},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


class StopAtScore(tunecore.Stopper):
    """The user's stopper: ends a trial once its score reaches 30."""

    def __call__(self, trial_id: str, result: dict[str, object]) -> bool:
        score = result["score"]
        return isinstance(score, float) and score >= 30.0

    def stop_all(self) -> bool:
        return False


def cpus(config: dict[str, JsonValue]) -> dict[str, float]:
    return {"cpu": 1.0}


def main(target: Path) -> None:
    with tempfile.TemporaryDirectory() as root:
        pbt = PopulationBasedTraining(
            time_attr="training_iteration",
            perturbation_interval=2,
            hyperparam_mutations={"rate": [1.0, 4.0]},
            quantile_fraction=0.5,
            resample_probability=0.0,
            seed=1,
        )
        Tuner(
            tunecore.with_resources(train, cpus),
            param_space={
                "rate": tunecore.grid_search([1.0, 4.0]),
                "offset": tunecore.sample_from(lambda spec: 0.5),
            },
            tune_config=TuneConfig(metric="score", mode="max", scheduler=pbt, seed=2),
            run_config=RunConfig(
                name="golden",
                storage_path=root,
                verbose=0,
                executor="in_process",
                stop=StopAtScore(),
            ),
        ).fit()
        write_expected(keep_log(Path(root) / "golden", target), target)
