# mypy: ignore-errors
# requires: keras, torch
# timeout: 300
"""Keras through `ray.tune.integration.keras`: Ray's MNIST example.

Follows python/ray/tune/examples/tune_mnist_keras.py (a dense network,
AsyncHyperBand, `TuneReportCheckpointCallback(checkpoint_on=[],
metrics={"mean_accuracy": "accuracy"})`, stopping at a mean accuracy of
0.99 or after N iterations), beside a trial of the callback with its
default checkpoints, whose model is read back as Ray's Keras checkpoints
are read (`keras.models.load_model` on the checkpoint's `model.keras`).

Two changes, both of the environment and not of Tune: a synthetic
MNIST-shaped dataset (28x28 images, 10 classes, the class a bright row) in
place of the download, and Keras 3 (`import keras`, here on its torch
backend) in place of `tf.keras`, which Ray's own callbacks import.
"""

import argparse
import os

os.environ.setdefault("KERAS_BACKEND", "torch")  # before Keras is imported

import keras
import numpy as np
import ray

import tunecore as tune
from tunecore.integration.keras import TuneReportCheckpointCallback
from tunecore.schedulers import AsyncHyperBandScheduler


def load_data():
    """(x_train, y_train), (x_test, y_test) shaped as MNIST's, small."""
    rng = np.random.default_rng(0)

    def images(count):
        labels = rng.integers(0, 10, count)
        pixels = rng.uniform(0, 128, (count, 28, 28))
        pixels[np.arange(count), labels * 2 + 4, :] += 127
        return pixels.astype("uint8"), labels

    return images(256), images(64)


def build_model(config):
    num_classes = 10
    model = keras.models.Sequential(
        [
            keras.Input((28, 28)),
            keras.layers.Flatten(),
            keras.layers.Dense(config["hidden"], activation="relu"),
            keras.layers.Dropout(0.2),
            keras.layers.Dense(num_classes, activation="softmax"),
        ]
    )
    model.compile(
        loss="sparse_categorical_crossentropy",
        optimizer=keras.optimizers.SGD(learning_rate=config["lr"], momentum=config["momentum"]),
        metrics=["accuracy"],
    )
    return model


def train_mnist(config):
    batch_size = 32
    epochs = 12

    (x_train, y_train), (x_test, y_test) = load_data()
    x_train, x_test = x_train / 255.0, x_test / 255.0
    model = build_model(config)
    callback = (
        TuneReportCheckpointCallback(metrics={"mean_accuracy": "val_accuracy"})
        if config.get("checkpoints")
        else TuneReportCheckpointCallback(checkpoint_on=[], metrics={"mean_accuracy": "accuracy"})
    )
    model.fit(
        x_train,
        y_train,
        batch_size=batch_size,
        epochs=epochs,
        verbose=0,
        validation_data=(x_test, y_test),
        callbacks=[callback],
    )


def tune_mnist(num_training_iterations, num_samples):
    sched = AsyncHyperBandScheduler(time_attr="training_iteration", max_t=400, grace_period=20)

    tuner = tune.Tuner(
        tune.with_resources(train_mnist, resources={"cpu": 1, "gpu": 0}),
        run_config=tune.RunConfig(
            name="exp",
            stop={"mean_accuracy": 0.99, "training_iteration": num_training_iterations},
        ),
        tune_config=tune.TuneConfig(
            scheduler=sched,
            metric="mean_accuracy",
            mode="max",
            num_samples=num_samples,
        ),
        param_space={
            "threads": 2,
            "lr": tune.uniform(0.05, 0.1),
            "momentum": tune.uniform(0.1, 0.9),
            "hidden": tune.randint(32, 64),
            "checkpoints": tune.grid_search([False, True]),
        },
    )
    results = tuner.fit()
    print("Best hyperparameters found were: ", results.get_best_result().config)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke-test", action="store_true", help="Finish quickly for testing")
    args, _ = parser.parse_known_args()

    ray.init(num_cpus=2)

    results = tune_mnist(num_training_iterations=3, num_samples=1)
    assert len(results) == 2
    assert not results.errors, results.errors
    for result in results:
        assert "mean_accuracy" in result.metrics
        assert (
            result.metrics["training_iteration"] == 3 or result.metrics["mean_accuracy"] >= 0.99
        ), result.metrics

    (plain,) = [r for r in results if not r.config["checkpoints"]]
    assert plain.checkpoint is None  # checkpoint_on=[]: metrics only
    (checkpointed,) = [r for r in results if r.config["checkpoints"]]
    assert checkpointed.checkpoint is not None
    assert checkpointed.checkpoint.get_metadata() == {"_model_filename": "model.keras"}
    with checkpointed.checkpoint.as_directory() as checkpoint_dir:
        model = keras.models.load_model(os.path.join(checkpoint_dir, "model.keras"))
    _, (x_test, y_test) = load_data()
    _, accuracy = model.evaluate(x_test / 255.0, y_test, verbose=0)
    # The model checkpointed with the last result is the one it measured.
    expected = checkpointed.metrics["mean_accuracy"]
    assert abs(accuracy - expected) < 1e-6, (accuracy, checkpointed.metrics)
    print(f"The checkpointed model's accuracy: {accuracy:.3f}")
