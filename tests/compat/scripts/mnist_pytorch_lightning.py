# mypy: ignore-errors
# requires: lightning, torch
# timeout: 300
"""PyTorch Lightning through `ray.tune.integration.pytorch_lightning`.

The model and data module of python/ray/tune/examples/mnist_ptl_mini.py
(whose run, `save_checkpoints=False`, tests/integrations covers), tuned as
Ray's "Using vanilla PyTorch Lightning with Tune" guide tunes it with
Population Based Training: `TuneReportCheckpointCallback(metrics,
filename="checkpoint", on="validation_end")` in a function trainable made
with `tune.with_parameters`, each trial resuming Lightning's fit from
`tune.get_checkpoint()` after an exploit, and the best model read back
with `LightningModule.load_from_checkpoint`.

One change, of the environment and not of Tune: a synthetic MNIST-shaped
dataset (1x28x28 images, 10 classes, the class a bright row) in place of
the download, and torchmetrics' Accuracy computed by hand.
"""

import os

import lightning.pytorch as pl
import ray
import torch
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

import tunecore as tune
from tunecore.integration.pytorch_lightning import TuneReportCheckpointCallback
from tunecore.schedulers import PopulationBasedTraining


def mnist_like(count, seed):
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 10, (count,), generator=generator)
    images = torch.rand(count, 1, 28, 28, generator=generator) * 0.5
    images[torch.arange(count), 0, labels * 2 + 4, :] += 0.5
    return TensorDataset(images, labels)


class MNISTDataModule(pl.LightningDataModule):
    def __init__(self, batch_size: int):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage=None):
        self.mnist_train = mnist_like(256, seed=0)
        self.mnist_val = mnist_like(64, seed=1)

    def train_dataloader(self):
        return DataLoader(self.mnist_train, batch_size=self.batch_size)

    def val_dataloader(self):
        return DataLoader(self.mnist_val, batch_size=self.batch_size)


class LightningMNISTClassifier(pl.LightningModule):
    def __init__(self, config):
        super().__init__()
        self.lr = config["lr"]
        layer_1, layer_2 = config["layer_1"], config["layer_2"]

        # mnist images are (1, 28, 28) (channels, width, height)
        self.layer_1 = torch.nn.Linear(28 * 28, layer_1)
        self.layer_2 = torch.nn.Linear(layer_1, layer_2)
        self.layer_3 = torch.nn.Linear(layer_2, 10)

    def forward(self, x):
        batch_size = x.size(0)  # images are (1, 28, 28) (channels, width, height)
        x = x.view(batch_size, -1)
        x = self.layer_1(x)
        x = torch.relu(x)
        x = self.layer_2(x)
        x = torch.relu(x)
        x = self.layer_3(x)
        return torch.log_softmax(x, dim=1)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)

    def training_step(self, train_batch, batch_idx):
        x, y = train_batch
        logits = self.forward(x)
        loss = F.nll_loss(logits, y)
        self.log("ptl/train_loss", loss)
        return loss

    def validation_step(self, val_batch, batch_idx):
        x, y = val_batch
        logits = self.forward(x)
        self.log("ptl/val_loss", F.nll_loss(logits, y))
        self.log("ptl/val_accuracy", (logits.argmax(dim=1) == y).float().mean())


def trainer_kwargs(num_epochs, callback):
    return {
        "max_epochs": num_epochs,
        "accelerator": "cpu",
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "logger": False,
        "enable_checkpointing": False,
        "callbacks": [callback],
    }


def train_mnist_tune_checkpoint(config, num_epochs=10):
    callback = TuneReportCheckpointCallback(
        metrics={"loss": "ptl/val_loss", "mean_accuracy": "ptl/val_accuracy"},
        filename="checkpoint",
        on="validation_end",
    )
    model = LightningMNISTClassifier(config)
    dm = MNISTDataModule(batch_size=config["batch_size"])
    trainer = pl.Trainer(**trainer_kwargs(num_epochs, callback))
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            trainer.fit(model, dm, ckpt_path=os.path.join(checkpoint_dir, "checkpoint"))
    else:
        trainer.fit(model, dm)


def tune_mnist_pbt(num_samples=10, num_epochs=10):
    config = {"layer_1": 32, "layer_2": 64, "lr": 1e-3, "batch_size": 64}
    scheduler = PopulationBasedTraining(
        perturbation_interval=1,
        quantile_fraction=0.5,
        hyperparam_mutations={"lr": tune.loguniform(1e-4, 1e-1), "batch_size": [32, 64]},
    )
    trainable = tune.with_parameters(train_mnist_tune_checkpoint, num_epochs=num_epochs)
    tuner = tune.Tuner(
        tune.with_resources(trainable, resources={"cpu": 1}),
        tune_config=tune.TuneConfig(
            metric="loss", mode="min", scheduler=scheduler, num_samples=num_samples
        ),
        run_config=tune.RunConfig(name="tune_mnist_pbt"),
        param_space=config,
    )
    results = tuner.fit()
    print("Best hyperparameters found were: ", results.get_best_result().config)
    return results


if __name__ == "__main__":
    ray.init(num_cpus=2)

    results = tune_mnist_pbt(num_samples=2, num_epochs=3)
    assert not results.errors, results.errors
    for result in results:
        # Resumed fits (after an exploit) go on from the epoch they hold.
        assert result.metrics["training_iteration"] == 3, result.metrics
        assert result.checkpoint is not None
    best = results.get_best_result()
    with best.checkpoint.as_directory() as checkpoint_dir:
        model = LightningMNISTClassifier.load_from_checkpoint(
            os.path.join(checkpoint_dir, "checkpoint"), config=best.config
        )
    model.eval()
    val = MNISTDataModule(batch_size=64)
    val.setup()
    with torch.no_grad():
        losses = [F.nll_loss(model(x), y, reduction="sum") for x, y in val.val_dataloader()]
    loss = float(sum(losses)) / len(val.mnist_val)
    # The model checkpointed with the last result is the one it measured.
    assert abs(loss - best.metrics["loss"]) < 1e-4, (loss, best.metrics)
    print(f"Best model's validation loss: {loss:.4f}")
