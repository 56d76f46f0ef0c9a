"""Population Based Training on a toy problem whose best learning rate moves.

Run it with `python examples/pbt.py` in an environment with tunecore
installed. Ray starts by itself; it takes well under a minute on two cores.

The "training" is a stand-in for a real one: each step adds a gain to a
score, largest when the learning rate is close to an optimum that decays
from 5e-2 to 2e-3 over the run (as a real schedule would anneal it). No
fixed learning rate does well for long, so a good schedule beats the best
constant, and PBT finds one: every 4 iterations the bottom quarter of the
population clones the state of a top-quarter trial (its checkpoint) and
continues with that trial's learning rate, perturbed (x0.6 or x1.5, or
resampled). The factors are wider than Ray's default (0.8, 1.2) so that
perturbing alone can keep up with the decay.

What it shows:

- a function trainable that saves its whole state (a JSON file in a
  directory) with every `tunecore.report` and resumes from
  `tunecore.get_checkpoint()`, which is how PBT's exploit hands it another
  trial's state and a new config;
- `PopulationBasedTraining` with `hyperparam_mutations` given as a search
  domain (`tunecore.loguniform`);
- how to tell what PBT did: each exploit restarts a trial from a checkpoint
  (its first result then has `iterations_since_restore == 1` past iteration
  1), and a perturbed trial's `experiment_tag` says `@perturbed[lr=...]`.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypedDict

import tunecore
from tunecore import Callback, RunConfig, Trial, TuneConfig, Tuner
from tunecore.model import JsonValue
from tunecore.schedulers import PopulationBasedTraining

STEPS = 40
POPULATION = 8
LR_START, LR_END = 5e-2, 2e-3
WIDTH = 0.3  # decades of learning rate within which a step still gains about 60%
STEP_SECONDS = 0.1  # the time a step of real training would take
STATE_FILE = "state.json"


class ToyConfig(TypedDict):
    lr: float


def optimal_lr(step: int) -> float:
    """The best learning rate at `step` (1-based): log-linear decay."""
    fraction = (step - 1) / (STEPS - 1)
    return LR_START * math.pow(LR_END / LR_START, fraction)


def gain(lr: float, step: int) -> float:
    """What one step adds to the score: 1 at the optimum, a Gaussian in
    log10(lr) around it."""
    distance = math.log10(lr / optimal_lr(step))
    return math.exp(-(distance**2) / (2 * WIDTH**2))


def train_toy(config: ToyConfig) -> None:
    """Step the toy model, saving its state with every report."""
    step, score = 0, 0.0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            state = json.loads(Path(directory, STATE_FILE).read_text())
        step, score = int(state["step"]), float(state["score"])
    while step < STEPS:
        step += 1
        time.sleep(STEP_SECONDS)
        score += gain(config["lr"], step)
        # tunecore copies the directory before report() returns.
        with tempfile.TemporaryDirectory() as directory:
            state = {"step": step, "score": score}
            Path(directory, STATE_FILE).write_text(json.dumps(state))
            tunecore.report(
                {"score": score, "lr": config["lr"]},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


class ExploitCounter(Callback):
    """Counts the runs that started from a checkpoint: with no failures,
    each is a PBT exploit."""

    def __init__(self) -> None:
        self.restores = 0

    def on_trial_result(
        self,
        iteration: int,
        trials: Sequence[Trial],
        trial: Trial,
        result: Mapping[str, JsonValue],
    ) -> None:
        since_restore = result.get("iterations_since_restore")
        total = result.get("training_iteration")
        if since_restore == 1 and isinstance(total, int) and total > 1:
            self.restores += 1


def best_constant_lr() -> tuple[float, float]:
    """The best score any fixed learning rate gets (searched on a fine grid
    in log space, no tuning needed), and that learning rate."""
    scores = []
    for exponent in range(-400, -99):
        lr = math.pow(10, exponent / 100)
        scores.append((sum(gain(lr, step) for step in range(1, STEPS + 1)), lr))
    return max(scores)


def main() -> None:
    started = time.monotonic()
    counter = ExploitCounter()
    tuner = Tuner(
        train_toy,
        param_space={"lr": tunecore.loguniform(1e-4, 1e-1)},
        tune_config=TuneConfig(
            metric="score",
            mode="max",
            num_samples=POPULATION,
            seed=0,
            scheduler=PopulationBasedTraining(
                time_attr="training_iteration",
                perturbation_interval=4,
                hyperparam_mutations={"lr": tunecore.loguniform(1e-4, 1e-1)},
                quantile_fraction=0.25,
                resample_probability=0.25,
                perturbation_factors=(1.5, 0.6),
                seed=0,
            ),
            # The whole population trains at once: PBT compares members that
            # are at about the same point of training. The toy needs little CPU.
            resources_per_trial={"cpu": 2 / POPULATION},
        ),
        run_config=RunConfig(
            name="pbt",
            storage_path=tempfile.mkdtemp(prefix="tunecore-pbt-"),
            stop={"training_iteration": STEPS},
            callbacks=[counter],
            verbose=1,
        ),
    )
    results = tuner.fit()
    if results.num_errors:
        raise SystemExit(f"{results.num_errors} trial(s) failed: {results.errors}")

    best = results.get_best_result()
    perturbed = [r for r in results if "@perturbed" in str(r.metrics.get("experiment_tag", ""))]
    constant_score, constant_lr = best_constant_lr()
    print(f"Best final score:  {best.metrics['score']:.2f} of {STEPS} (trial {best.trial_id})")
    print(f"  its final lr:    {best.config['lr']:.2e} (optimum at the end: {LR_END:.0e})")
    print(f"  its tag:         {best.metrics.get('experiment_tag')}")
    print(f"Best constant lr:  {constant_score:.2f} of {STEPS} (lr={constant_lr:.2e})")
    print(f"Exploits:          {counter.restores} restores from a top trial's checkpoint")
    print(f"Perturbed trials:  {len(perturbed)} of {len(results)} end with '@perturbed' tags")
    print(f"Done in {time.monotonic() - started:.1f} s (results in {results.experiment_path})")


if __name__ == "__main__":
    main()
