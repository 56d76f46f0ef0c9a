"""Ray Tune's `ray.tune.examples.mnist_pytorch`: a small convolutional
network on MNIST, the helpers Ray's PBT examples and tutorials import
(`from ray.tune.examples.mnist_pytorch import ConvNet, get_data_loaders,
train_func, test_func`), and the function trainable `train_mnist`.

The same API and behaviour as Ray 2.60's module, reporting through tunecore
(Ray's own calls Ray Tune's `tune.report`, which has no trial to report to
under tunecore):

- `ConvNet`: one 3x3 convolution to 3 channels, a 3x3 max pool, one linear
  layer to 10 log-probabilities; its state dict has Ray's keys (`conv1.*`,
  `fc.*`), so a model saved by either loads in the other.
- `train_func` trains on the batches that start at most `EPOCH_SIZE`
  samples in; `test_func` scores the batches that start at most `TEST_SIZE`
  samples in, returning the fraction right. Both shuffle nothing themselves:
  the loaders do.
- `get_data_loaders(batch_size=64)`: torchvision's MNIST under `~/data`
  (downloaded there if absent, under the file lock `~/data.lock` so that
  trials starting together do not download over each other), normalised
  with MNIST's mean and deviation, both loaders shuffled.
- `train_mnist(config)` trains with SGD (`config["lr"]`,
  `config["momentum"]`) until stopped, reporting `mean_accuracy` each
  epoch, with a checkpoint (`model.pt`, the state dict) when
  `config["should_checkpoint"]` is true.

Needs the `torchvision` extra (`pip install 'tunecore[torchvision]'`).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from tunecore.examples._extra import missing_extra
from tunecore.shell.trainable import Checkpoint, report

try:
    import torch
    import torch.nn.functional as F
    from filelock import FileLock
    from torch import nn, optim
    from torch.utils.data import DataLoader
    from torchvision import datasets, transforms
except ModuleNotFoundError as error:
    raise missing_extra(__name__, error) from error

__all__ = [
    "EPOCH_SIZE",
    "TEST_SIZE",
    "ConvNet",
    "get_data_loaders",
    "test_func",
    "train_func",
    "train_mnist",
]

EPOCH_SIZE = 512
"""Samples `train_func` trains on per call (give or take a batch)."""
TEST_SIZE = 256
"""Samples `test_func` scores per call (give or take a batch)."""

DATA_ROOT = "~/data"
"""Where MNIST is read from, and downloaded to when absent (Ray's place)."""
DATA_LOCK = "~/data.lock"
"""The file lock held while the data sets are opened (and downloaded)."""
_MNIST_MEAN, _MNIST_STD = 0.1307, 0.3081
_FEATURES = 192  # 3 channels of 8x8 after the convolution and the pool


class ConvNet(nn.Module):
    """MNIST's 28x28 grey images to log-probabilities of the 10 digits."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 3, kernel_size=3)
        self.fc = nn.Linear(_FEATURES, 10)

    def forward(self, x: Any) -> Any:
        pooled = F.relu(F.max_pool2d(self.conv1(x), 3))
        return F.log_softmax(self.fc(pooled.view(-1, _FEATURES)), dim=1)


def _device(device: Any) -> Any:
    return device or torch.device("cpu")


def train_func(model: Any, optimizer: Any, train_loader: Any, device: Any = None) -> None:
    """One short epoch: SGD steps on the negative log-likelihood over the
    loader's batches until one starts past `EPOCH_SIZE` samples."""
    device = _device(device)
    model.train()
    for index, (images, labels) in enumerate(train_loader):
        if index * len(images) > EPOCH_SIZE:
            return
        optimizer.zero_grad()
        F.nll_loss(model(images.to(device)), labels.to(device)).backward()
        optimizer.step()


def test_func(
    model: Any,
    data_loader: Any,
    device: Any = None,  # noqa: PT028 - Ray's name and signature, not a test
) -> float:
    """The fraction of samples the model classifies right, over the
    loader's batches until one starts past `TEST_SIZE` samples."""
    device = _device(device)
    model.eval()
    right = seen = 0
    with torch.no_grad():
        for index, (images, labels) in enumerate(data_loader):
            if index * len(images) > TEST_SIZE:
                break
            predicted = model(images.to(device)).argmax(dim=1)
            seen += labels.size(0)
            right += int((predicted == labels.to(device)).sum().item())
    return right / seen


def get_data_loaders(batch_size: int = 64) -> tuple[Any, Any]:
    """The shuffled training and test loaders of MNIST under `~/data`
    (downloaded if absent, under the lock `~/data.lock`)."""
    normalised = transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize((_MNIST_MEAN,), (_MNIST_STD,))]
    )
    with FileLock(os.path.expanduser(DATA_LOCK)):
        return tuple(
            DataLoader(
                datasets.MNIST(DATA_ROOT, train=train, download=True, transform=normalised),
                batch_size=batch_size,
                shuffle=True,
            )
            for train in (True, False)
        )


def train_mnist(config: dict[str, Any]) -> None:
    """A function trainable: train `ConvNet` with SGD at `config["lr"]` and
    `config["momentum"]` until stopped, reporting `mean_accuracy` after each
    short epoch, with a checkpoint holding `model.pt` (the state dict) when
    `config.get("should_checkpoint")` is true."""
    should_checkpoint = config.get("should_checkpoint", False)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader, test_loader = get_data_loaders()
    model = ConvNet().to(device)
    optimizer = optim.SGD(model.parameters(), lr=config["lr"], momentum=config["momentum"])
    while True:
        train_func(model, optimizer, train_loader, device)
        metrics = {"mean_accuracy": test_func(model, test_loader, device)}
        if not should_checkpoint:
            report(metrics)
            continue
        with tempfile.TemporaryDirectory() as directory:
            torch.save(model.state_dict(), os.path.join(directory, "model.pt"))
            report(metrics, checkpoint=Checkpoint.from_directory(directory))
