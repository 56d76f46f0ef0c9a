"""Ray Tune's `ray.tune.examples.cifar10_pytorch`: the PyTorch CIFAR-10
tutorial's network and training function (`from
ray.tune.examples.cifar10_pytorch import Net, load_data, train_cifar`),
reporting through tunecore.

As Ray 2.60's:

- `Net(l1=120, l2=84)`: two 5x5 convolutions with 2x2 max pools, then
  three linear layers (400 -> l1 -> l2 -> 10), Ray's layer names.
- `load_data(data_dir)`: torchvision's CIFAR-10 train and test sets under
  `data_dir`, downloaded if absent under the lock `~/.data.lock`,
  normalised per channel; `load_test_data()`: torchvision's `FakeData`
  of that shape (128 training, 16 test images), for smoke tests.
  `DATA_DIR` is a fresh temporary directory made at import, as in Ray.
- `train_cifar(config)`: 10 epochs of SGD (`config["lr"]`, momentum 0.9)
  on 80% of the training set, batches of `config["batch_size"]`; after
  each epoch reports `loss` and `accuracy` on the other 20%, with a
  checkpoint `checkpoint.pt` holding `(model_state, optimizer_state)`, and
  resumes from `get_checkpoint()`. `config["smoke_test"]` picks the fake
  data (and no loader workers).
- `test_best_model(config, checkpoint, smoke_test=False)` prints the test
  accuracy of a checkpoint; `main(num_samples=10, max_num_epochs=10,
  gpus_per_trial=2, smoke_test=False)` tunes l1, l2, lr and batch size with
  ASHA and prints the best trial.

Needs the `torchvision` extra (`pip install 'tunecore[torchvision]'`).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from tunecore.examples._extra import missing_extra
from tunecore.shell.trainable import Checkpoint, get_checkpoint, report

try:
    import torch
    import torch.nn.functional as F
    import torchvision
    from filelock import FileLock
    from torch import nn, optim
    from torch.utils.data import DataLoader, random_split
    from torchvision import transforms
except ModuleNotFoundError as error:
    raise missing_extra(__name__, error) from error

__all__ = [
    "DATA_DIR",
    "Net",
    "load_data",
    "load_test_data",
    "main",
    "test_best_model",
    "train_cifar",
]

DATA_DIR = tempfile.mkdtemp()
"""Where `train_cifar` downloads CIFAR-10 outside smoke tests (Ray's choice:
a fresh directory per process)."""
DATA_LOCK = "~/.data.lock"
_CHANNEL_MEANS = (0.4914, 0.4822, 0.4465)
_CHANNEL_STDS = (0.2023, 0.1994, 0.2010)
_FEATURES = 16 * 5 * 5
_EPOCHS = 10
_TRAIN_SHARE = 0.8  # of the training set; the rest validates
_CHECKPOINT_FILE = "checkpoint.pt"


def load_data(data_dir: str) -> tuple[Any, Any]:
    """CIFAR-10's training and test sets under `data_dir` (downloaded if
    absent, under the lock `~/.data.lock`)."""
    normalised = transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize(_CHANNEL_MEANS, _CHANNEL_STDS)]
    )
    with FileLock(os.path.expanduser(DATA_LOCK)):
        train = torchvision.datasets.CIFAR10(
            root=data_dir, train=True, download=True, transform=normalised
        )
        test = torchvision.datasets.CIFAR10(
            root=data_dir, train=False, download=True, transform=normalised
        )
    return train, test


def load_test_data() -> tuple[Any, Any]:
    """Random CIFAR-shaped images (torchvision's FakeData): 128 to train on,
    16 to test, nothing downloaded."""
    return tuple(
        torchvision.datasets.FakeData(
            count, (3, 32, 32), num_classes=10, transform=transforms.ToTensor()
        )
        for count in (128, 16)
    )


class Net(nn.Module):
    """32x32 colour images to scores of CIFAR-10's 10 classes; `l1`, `l2`
    are the widths of the two hidden linear layers."""

    def __init__(self, l1: int = 120, l2: int = 84) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(_FEATURES, l1)
        self.fc2 = nn.Linear(l1, l2)
        self.fc3 = nn.Linear(l2, 10)

    def forward(self, x: Any) -> Any:
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = F.relu(self.fc1(x.view(-1, _FEATURES)))
        return self.fc3(F.relu(self.fc2(x)))


def _device_of(net: Any) -> tuple[Any, str]:
    """`net` on the first GPU if there is one (spread over all of them
    where there are several), else on the CPU; and that device."""
    device = "cpu"
    if torch.cuda.is_available():
        device = "cuda:0"
        if torch.cuda.device_count() > 1:
            net = nn.DataParallel(net)
    net.to(device)
    return net, device


def _train_epoch(net: Any, loader: Any, optimizer: Any, device: str, epoch: int) -> None:
    """One pass over `loader`, printing the mean loss every 2000 batches."""
    criterion = nn.CrossEntropyLoss()
    running_loss = 0.0
    for steps, (inputs, labels) in enumerate(loader, start=1):
        optimizer.zero_grad()
        loss = criterion(net(inputs.to(device)), labels.to(device))
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if steps % 2000 == 0:
            print(f"[{epoch + 1}, {steps:5d}] loss: {running_loss / steps:.3f}")
            running_loss = 0.0


def _validate(net: Any, loader: Any, device: str) -> dict[str, float]:
    """The mean loss per batch and the accuracy over `loader`."""
    criterion = nn.CrossEntropyLoss()
    loss, batches, right, seen = 0.0, 0, 0, 0
    with torch.no_grad():
        for inputs, labels in loader:
            labels = labels.to(device)  # noqa: PLW2901 - the batch's labels, moved
            outputs = net(inputs.to(device))
            right += int((outputs.argmax(dim=1) == labels).sum().item())
            seen += labels.size(0)
            loss += float(criterion(outputs, labels).cpu().numpy())
            batches += 1
    return {"loss": loss / batches, "accuracy": right / seen}


def train_cifar(config: dict[str, Any]) -> None:
    """A function trainable (module docstring): 10 epochs, a report with a
    checkpoint after each."""
    net, device = _device_of(Net(config["l1"], config["l2"]))
    optimizer = optim.SGD(net.parameters(), lr=config["lr"], momentum=0.9)
    checkpoint = get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as directory:
            model_state, optimizer_state = torch.load(os.path.join(directory, _CHECKPOINT_FILE))
        net.load_state_dict(model_state)
        optimizer.load_state_dict(optimizer_state)

    smoke_test = config["smoke_test"]
    train_set, _ = load_test_data() if smoke_test else load_data(DATA_DIR)
    train_size = int(len(train_set) * _TRAIN_SHARE)
    train_subset, val_subset = random_split(train_set, [train_size, len(train_set) - train_size])
    train_loader, val_loader = (
        DataLoader(
            subset,
            batch_size=int(config["batch_size"]),
            shuffle=True,
            num_workers=0 if smoke_test else 8,
        )
        for subset in (train_subset, val_subset)
    )
    for epoch in range(_EPOCHS):
        _train_epoch(net, train_loader, optimizer, device, epoch)
        metrics = _validate(net, val_loader, device)
        with tempfile.TemporaryDirectory() as directory:
            torch.save(
                (net.state_dict(), optimizer.state_dict()),
                os.path.join(directory, _CHECKPOINT_FILE),
            )
            report(metrics, checkpoint=Checkpoint.from_directory(directory))
    print("Finished Training")


def test_best_model(
    config: dict[str, Any],
    checkpoint: Checkpoint,
    smoke_test: bool = False,  # noqa: PT028 - Ray's name and signature, not a test
) -> None:
    """Print the test-set accuracy of the model in `checkpoint`, a `Net`
    of `config["l1"]`, `config["l2"]`."""
    model = Net(config["l1"], config["l2"])
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    model.to(device)
    with checkpoint.as_directory() as directory:
        model_state, _ = torch.load(os.path.join(directory, _CHECKPOINT_FILE))
    model.load_state_dict(model_state)
    _, test_set = load_test_data() if smoke_test else load_data(DATA_DIR)
    right = seen = 0
    with torch.no_grad():
        for images, labels in DataLoader(test_set, batch_size=4, shuffle=False, num_workers=2):
            predicted = model(images.to(device)).argmax(dim=1)
            right += int((predicted == labels.to(device)).sum().item())
            seen += labels.size(0)
    print(f"Best trial test set accuracy: {right / seen}")


def main(
    num_samples: int = 10,
    max_num_epochs: int = 10,
    gpus_per_trial: float = 2,
    smoke_test: bool = False,
) -> None:
    """Tune `train_cifar` with ASHA (`max_t=max_num_epochs`), 2 CPUs and
    `gpus_per_trial` GPUs a trial, and test the best trial's model."""
    import tunecore as tune  # noqa: PLC0415 - the driver's half of tunecore, on use

    config = {
        "l1": tune.sample_from(lambda _: 2 ** np.random.randint(2, 9)),
        "l2": tune.sample_from(lambda _: 2 ** np.random.randint(2, 9)),
        "lr": tune.loguniform(1e-4, 1e-1),
        "batch_size": tune.choice([2, 4, 8, 16]),
        "smoke_test": smoke_test,
    }
    scheduler = tune.schedulers.ASHAScheduler(
        max_t=max_num_epochs, grace_period=1, reduction_factor=2
    )
    tuner = tune.Tuner(
        tune.with_resources(
            tune.with_parameters(train_cifar), resources={"cpu": 2, "gpu": gpus_per_trial}
        ),
        tune_config=tune.TuneConfig(
            metric="loss", mode="min", num_samples=num_samples, scheduler=scheduler
        ),
        param_space=config,
    )
    best = tuner.fit().get_best_result("loss", "min")
    print(f"Best trial config: {best.config}")
    print(f"Best trial final validation loss: {best.metrics['loss']}")
    print(f"Best trial final validation accuracy: {best.metrics['accuracy']}")
    assert best.checkpoint is not None  # train_cifar reports one with every result
    test_best_model(best.config, best.checkpoint, smoke_test=smoke_test)
