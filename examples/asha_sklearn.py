"""Tune a scikit-learn classifier under ASHA, with a checkpoint every epoch.

Run it with `python examples/asha_sklearn.py` in an environment with
tunecore and the `examples` extra installed (`pip install -e ".[examples]"`,
which adds scikit-learn). Ray starts by itself; it takes under a minute on
two cores, most of it starting Ray and its worker processes, and needs no
download: the digits data set ships with scikit-learn.

What it shows:

- an incrementally trained model (`SGDClassifier.partial_fit`, one epoch per
  `tunecore.report`) searched over a log-uniform learning rate and
  regularisation and a categorical loss, with ASHA stopping the trials whose
  validation accuracy lags;
- a checkpoint every epoch written without pickle: the weights with
  `numpy.savez`, the epoch and step counter as JSON. A trial given a
  checkpoint (`tunecore.get_checkpoint()`, e.g. after a failure) rebuilds
  its estimator from those arrays and carries on from the next epoch;
- `CheckpointConfig(num_to_keep=2, ...)` keeping each trial's two best
  checkpoints by accuracy, and the best one reloaded at the end and scored
  on a test split no trial ever saw, to show the checkpoint is the model.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypedDict

import numpy as np
from numpy.typing import NDArray
from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier

import tunecore
from tunecore import CheckpointConfig, FailureConfig, RunConfig, TuneConfig, Tuner
from tunecore.schedulers import ASHAScheduler

MAX_EPOCHS = 20
WEIGHTS_FILE = "model.npz"
STATE_FILE = "state.json"

Loss = Literal["hinge", "log_loss", "modified_huber"]
LOSSES: tuple[Loss, ...] = ("hinge", "log_loss", "modified_huber")


class SGDConfig(TypedDict):
    """One trial's hyperparameters, as sampled from the search space below."""

    eta0: float
    alpha: float
    loss: Loss


@dataclass(frozen=True)
class Digits:
    """The digits split once, the same way in every trial: 60% to train on,
    20% for the validation accuracy ASHA ranks by, 20% held out for the end."""

    x_train: NDArray[np.float64]
    y_train: NDArray[np.int64]
    x_val: NDArray[np.float64]
    y_val: NDArray[np.int64]
    x_test: NDArray[np.float64]
    y_test: NDArray[np.int64]
    classes: NDArray[np.int64]


def load_data() -> Digits:
    features, labels = load_digits(return_X_y=True)
    features = features / 16.0  # pixel intensities are 0..16
    order = np.random.default_rng(0).permutation(len(labels))
    test, val, train = np.split(order, [len(order) // 5, 2 * len(order) // 5])
    return Digits(
        x_train=features[train],
        y_train=labels[train],
        x_val=features[val],
        y_val=labels[val],
        x_test=features[test],
        y_test=labels[test],
        classes=np.unique(labels),
    )


def new_model(config: SGDConfig) -> SGDClassifier:
    # We shuffle each epoch ourselves (seeded by the epoch), so a trial
    # resumed from a checkpoint sees exactly the batches it would have seen.
    return SGDClassifier(
        loss=config["loss"],
        alpha=config["alpha"],
        learning_rate="constant",
        eta0=config["eta0"],
        shuffle=False,
    )


def save_model(model: SGDClassifier, directory: str, *, epoch: int, accuracy: float) -> None:
    """The model's whole training state, as arrays and JSON (no pickle)."""
    np.savez(
        os.path.join(directory, WEIGHTS_FILE),
        coef=model.coef_,
        intercept=model.intercept_,
        classes=model.classes_,
    )
    state = {"epoch": epoch, "t": model.t_, "accuracy": accuracy}
    Path(directory, STATE_FILE).write_text(json.dumps(state))


def load_model(model: SGDClassifier, directory: str) -> int:
    """Put the state `save_model` wrote back into a fresh `model`, so the next
    `partial_fit` continues where it left off; returns the epoch it was at."""
    with np.load(os.path.join(directory, WEIGHTS_FILE)) as arrays:
        model.coef_ = arrays["coef"]
        model.intercept_ = arrays["intercept"]
        model.classes_ = arrays["classes"]
    model.n_features_in_ = model.coef_.shape[1]
    state = json.loads(Path(directory, STATE_FILE).read_text())
    model.t_ = float(state["t"])
    return int(state["epoch"])


def train_digits(config: SGDConfig) -> None:
    """One epoch of SGD per report, with a checkpoint of the model each time."""
    data = load_data()
    model = new_model(config)
    done = 0
    checkpoint = tunecore.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            done = load_model(model, directory)
    for epoch in range(done + 1, MAX_EPOCHS + 1):
        order = np.random.default_rng(epoch).permutation(len(data.y_train))
        model.partial_fit(data.x_train[order], data.y_train[order], classes=data.classes)
        accuracy = model.score(data.x_val, data.y_val)
        # tunecore copies the directory before report() returns, so a
        # temporary one is enough.
        with tempfile.TemporaryDirectory() as directory:
            save_model(model, directory, epoch=epoch, accuracy=accuracy)
            tunecore.report(
                {"accuracy": accuracy, "epoch": epoch},
                checkpoint=tunecore.Checkpoint.from_directory(directory),
            )


def best_checkpoint(trial_dir: Path) -> tuple[Path, float]:
    """The kept checkpoint of a trial with the best validation accuracy, read
    from the state each checkpoint carries (a `Result` names only the newest)."""
    kept = []
    for directory in sorted(trial_dir.glob("checkpoint_*")):
        state = json.loads((directory / STATE_FILE).read_text())
        kept.append((float(state["accuracy"]), directory))
    if not kept:
        raise RuntimeError(f"no checkpoint in {trial_dir}")
    accuracy, directory = max(kept)
    return directory, accuracy


def main() -> None:
    started = time.monotonic()
    tuner = Tuner(
        train_digits,
        param_space={
            "eta0": tunecore.loguniform(1e-4, 0.3),
            "alpha": tunecore.loguniform(1e-6, 1e-1),
            "loss": tunecore.choice(list(LOSSES)),
        },
        tune_config=TuneConfig(
            metric="accuracy",
            mode="max",
            num_samples=12,
            seed=3,
            scheduler=ASHAScheduler(max_t=MAX_EPOCHS, grace_period=2, reduction_factor=3),
        ),
        run_config=RunConfig(
            name="asha_sklearn",
            storage_path=tempfile.mkdtemp(prefix="tunecore-asha-sklearn-"),
            stop={"training_iteration": MAX_EPOCHS},
            checkpoint_config=CheckpointConfig(
                num_to_keep=2,
                checkpoint_score_attribute="accuracy",
                checkpoint_score_order="max",
            ),
            failure_config=FailureConfig(max_failures=2),
            verbose=1,
        ),
    )
    results = tuner.fit()
    if results.num_errors:
        raise SystemExit(f"{results.num_errors} trial(s) failed: {results.errors}")

    # "all": rank trials by their best epoch, the one their best checkpoint holds.
    best = results.get_best_result(scope="all")
    config = best.config
    path, accuracy = best_checkpoint(Path(best.path))
    epochs = sorted(as_int(r.metrics.get("training_iteration")) for r in results)
    print(f"Trials: {len(results)}, epochs each: {epochs} (ASHA stopped the laggards)")
    print(
        f"Best config: loss={config['loss']}, eta0={config['eta0']:.5f}, "
        f"alpha={config['alpha']:.2e}"
    )
    print(f"Best validation accuracy: {accuracy:.4f}")
    print(f"Best checkpoint: {path}")

    # The checkpoint is the model: rebuild it from the arrays, score it on
    # the test split no trial trained or was ranked on.
    data = load_data()
    model = new_model(sgd_config(config))
    epoch = load_model(model, str(path))
    test_accuracy = model.score(data.x_test, data.y_test)
    print(f"Reloaded epoch {epoch}: test accuracy {test_accuracy:.4f} on {len(data.y_test)} digits")
    print(f"Done in {time.monotonic() - started:.1f} s (results in {results.experiment_path})")


def sgd_config(config: Mapping[str, object]) -> SGDConfig:
    """A trial's config (plain JSON in a `Result`) back as the typed dict."""
    eta0, alpha, loss = config["eta0"], config["alpha"], config["loss"]
    if isinstance(eta0, float) and isinstance(alpha, float):
        for known in LOSSES:
            if loss == known:
                return SGDConfig(eta0=eta0, alpha=alpha, loss=known)
    raise ValueError(f"not a config of this search space: {config!r}")


def as_int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0


if __name__ == "__main__":
    main()
