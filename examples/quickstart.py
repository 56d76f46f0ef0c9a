"""A first tuning run: a synthetic objective, tuned under ASHA on a local Ray.

Run it with `./dev demo` (or `python examples/quickstart.py` in an
environment with tunecore installed). Ray starts by itself; pass
`RunConfig(address="ray://...")` to run the same code on a cluster.

The objective is a noisy bowl: the loss falls as training goes on and ends
lowest near width=8, height=-3. ASHA stops the trials whose loss lags.
"""

from __future__ import annotations

import math
import tempfile

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.schedulers import ASHAScheduler

ITERATIONS = 30


def objective(config: dict[str, float]) -> None:
    """Report a loss every step, as a training loop reports its validation loss."""
    width, height = config["width"], config["height"]
    target = (width - 8.0) ** 2 / 10.0 + (height + 3.0) ** 2 / 10.0
    for step in range(1, ITERATIONS + 1):
        loss = target + 10.0 / step + 0.1 * math.sin(step * width)
        tunecore.report({"loss": loss, "width": width, "height": height})


def main() -> None:
    tuner = Tuner(
        objective,
        param_space={
            "width": tunecore.uniform(0, 20),
            "height": tunecore.uniform(-10, 10),
        },
        tune_config=TuneConfig(
            metric="loss",
            mode="min",
            num_samples=16,
            seed=7,
            scheduler=ASHAScheduler(max_t=ITERATIONS, grace_period=3, reduction_factor=3),
        ),
        run_config=RunConfig(
            name="quickstart",
            storage_path=tempfile.mkdtemp(prefix="tunecore-quickstart-"),
            stop={"training_iteration": ITERATIONS},
        ),
    )
    results = tuner.fit()
    best = results.get_best_result()
    print(f"Best config: width={best.config['width']:.3f}, height={best.config['height']:.3f}")
    print(f"Best loss:   {best.metrics['loss']:.4f}   (results in {results.experiment_path})")


if __name__ == "__main__":
    main()
