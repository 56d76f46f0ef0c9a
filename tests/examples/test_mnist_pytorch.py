"""`tunecore.examples.mnist_pytorch` and `.mnist_pytorch_trainable`, Ray
Tune's MNIST helper modules, on a synthetic MNIST written where
torchvision reads it (tests/examples/mnist_files.py): the loaders read it
from `~/data` without downloading, the helpers train and score as Ray's do,
and the trainables report and checkpoint through tunecore (in-process
executor, so HOME is this test's; tests/examples/test_ray_example_scripts.py
runs Ray's own scripts on Ray's workers).

Runs where torch and torchvision are installed; skipped elsewhere."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import tunecore as tune
from tests.examples.mnist_files import write_mnist

pytest.importorskip("torch")
pytest.importorskip("torchvision")
import torch

from tunecore.examples import mnist_pytorch
from tunecore.examples.mnist_pytorch import ConvNet, get_data_loaders, train_func, train_mnist
from tunecore.examples.mnist_pytorch_trainable import TrainMNIST

TRAIN, TEST = 1024, 320


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME whose `~/data` holds the synthetic MNIST."""
    monkeypatch.setenv("HOME", str(tmp_path))
    write_mnist(tmp_path / "data", train_count=TRAIN, test_count=TEST)
    return tmp_path


class Batches:
    """A loader of `count` batches of `size` MNIST-shaped samples that
    records which batches were taken."""

    def __init__(self, count: int, size: int) -> None:
        generator = torch.Generator().manual_seed(0)
        self.batches = [
            (torch.randn(size, 1, 28, 28, generator=generator), torch.randint(0, 10, (size,)))
            for _ in range(count)
        ]
        self.taken = 0

    def __iter__(self) -> Any:
        for batch in self.batches:
            self.taken += 1
            yield batch


def test_the_loaders_read_mnist_from_home_data_without_downloading(home: Path) -> None:
    train_loader, test_loader = get_data_loaders(batch_size=32)
    assert (len(train_loader.dataset), len(test_loader.dataset)) == (TRAIN, TEST)
    assert train_loader.batch_size == test_loader.batch_size == 32
    images, labels = next(iter(train_loader))
    assert images.shape == (32, 1, 28, 28)
    assert labels.dtype == torch.int64
    # Normalised with MNIST's mean and deviation: black is -0.1307 / 0.3081.
    assert images.min().item() == pytest.approx(-0.1307 / 0.3081, abs=1e-4)
    assert (home / "data.lock").exists()  # the lock Ray's module holds while opening them
    assert not (home / "data" / "MNIST" / "raw" / "train-images-idx3-ubyte.gz").exists()


def test_both_loaders_shuffle_as_rays_do(home: Path) -> None:
    from torch.utils.data import RandomSampler  # noqa: PLC0415 - torch only where installed

    assert all(isinstance(loader.sampler, RandomSampler) for loader in get_data_loaders())


def test_convnet_has_rays_layers_and_gives_log_probabilities() -> None:
    model = ConvNet()
    assert sorted(model.state_dict()) == ["conv1.bias", "conv1.weight", "fc.bias", "fc.weight"]
    out = model(torch.zeros(5, 1, 28, 28))
    assert out.shape == (5, 10)
    assert torch.allclose(out.exp().sum(dim=1), torch.ones(5))


def test_train_func_takes_the_batches_that_start_within_epoch_size() -> None:
    model = ConvNet()
    before = [p.clone() for p in model.parameters()]
    loader = Batches(count=20, size=64)
    train_func(model, torch.optim.SGD(model.parameters(), lr=0.1), loader)
    # Batches start at 0, 64, ..., 512 (<= EPOCH_SIZE): nine trained; the
    # tenth, starting at 576, is taken and ends the epoch.
    assert mnist_pytorch.EPOCH_SIZE == 512
    assert loader.taken == 10
    assert model.training
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def test_test_func_scores_the_batches_that_start_within_test_size() -> None:
    model = ConvNet()
    loader = Batches(count=10, size=100)
    accuracy = mnist_pytorch.test_func(model, loader)
    assert mnist_pytorch.TEST_SIZE == 256
    assert loader.taken == 4  # 0, 100, 200 scored; 300 ends it
    with torch.no_grad():
        right = sum(int((model(x).argmax(dim=1) == y).sum()) for x, y in loader.batches[:3])
    assert accuracy == right / 300
    assert not model.training


@pytest.mark.slow  # a few epochs of real training
def test_train_mnist_learns_and_checkpoints_through_tunecore(home: Path) -> None:
    torch.manual_seed(0)
    results = tune.Tuner(
        train_mnist,
        param_space={"lr": 0.01, "momentum": 0.9, "should_checkpoint": True},
        run_config=tune.RunConfig(
            storage_path=str(home / "results"),
            name="exp",
            stop={"training_iteration": 4},
            executor="in_process",
            verbose=0,
        ),
    ).fit()
    result = results[0]
    assert result.error is None
    assert result.metrics_dataframe is not None
    assert result.checkpoint is not None
    history = result.metrics_dataframe["mean_accuracy"].tolist()
    assert len(history) == 4
    assert max(history) > 0.5  # chance is 0.1; the bright row is learnt in a few epochs
    with result.checkpoint.as_directory() as directory:
        model = ConvNet()
        model.load_state_dict(torch.load(os.path.join(directory, "model.pt")))
    _, test_loader = get_data_loaders()
    assert mnist_pytorch.test_func(model, test_loader) > 0.5


@pytest.mark.slow  # a few epochs of real training
def test_train_mnist_without_should_checkpoint_reports_no_checkpoint(home: Path) -> None:
    results = tune.Tuner(
        train_mnist,
        param_space={"lr": 0.01, "momentum": 0.5},
        run_config=tune.RunConfig(
            storage_path=str(home / "results"),
            stop={"training_iteration": 1},
            executor="in_process",
            verbose=0,
        ),
    ).fit()
    assert results[0].checkpoint is None
    assert 0 <= float(results[0].metrics["mean_accuracy"]) <= 1  # type: ignore[arg-type]


@pytest.mark.slow  # a few epochs of real training
def test_train_mnist_trainable_saves_and_restores_its_model(home: Path, tmp_path: Path) -> None:
    first = TrainMNIST(config={"lr": 0.05})
    assert first.optimizer.param_groups[0]["lr"] == 0.05
    assert first.optimizer.param_groups[0]["momentum"] == 0.9  # Ray's default
    assert 0 <= float(first.train()["mean_accuracy"]) <= 1  # type: ignore[arg-type]
    path = first.save(str(tmp_path / "saved"))
    assert (Path(path) / "model.pth").is_file()
    second = TrainMNIST(config={})
    second.restore(path)
    for a, b in zip(
        first.model.state_dict().values(), second.model.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)
    _, test_loader = get_data_loaders()
    assert mnist_pytorch.test_func(second.model, test_loader) == mnist_pytorch.test_func(
        first.model, test_loader
    )
