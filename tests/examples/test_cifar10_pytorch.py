"""`tunecore.examples.cifar10_pytorch`, Ray Tune's CIFAR-10 tutorial
module, on its smoke-test data (torchvision's FakeData, nothing
downloaded): the network's shape, and `train_cifar` reporting Ray's
metrics with a checkpoint per epoch through tunecore (in-process
executor), read back by `test_best_model`.

Runs where torch and torchvision are installed; skipped elsewhere."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import tunecore as tune

pytest.importorskip("torch")
pytest.importorskip("torchvision")
import torch

from tunecore.examples import cifar10_pytorch
from tunecore.examples.cifar10_pytorch import Net, load_test_data, train_cifar


def test_net_takes_cifar_images_and_rays_widths() -> None:
    net = Net(l1=8, l2=4)
    assert net(torch.zeros(2, 3, 32, 32)).shape == (2, 10)
    assert (net.fc1.out_features, net.fc2.out_features) == (8, 4)
    assert Net().fc1.out_features == 120


def test_the_smoke_test_data_is_fake_cifar() -> None:
    train, test = load_test_data()
    assert (len(train), len(test)) == (128, 16)
    image, label = train[0]
    assert image.shape == (3, 32, 32)
    assert 0 <= label < 10


@pytest.mark.slow  # a few epochs of real training
def test_train_cifar_reports_each_epoch_with_a_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = {"l1": 8, "l2": 4, "lr": 0.01, "batch_size": 16, "smoke_test": True}
    results = tune.Tuner(
        train_cifar,
        param_space=config,
        run_config=tune.RunConfig(
            storage_path=str(tmp_path), name="exp", executor="in_process", verbose=0
        ),
    ).fit()
    result = results[0]
    assert result.error is None
    assert result.metrics_dataframe is not None
    assert len(result.metrics_dataframe) == 10  # ten epochs
    assert set(result.metrics_dataframe.columns) >= {"loss", "accuracy"}
    assert result.checkpoint is not None
    with result.checkpoint.as_directory() as directory:
        model_state, optimizer_state = torch.load(os.path.join(directory, "checkpoint.pt"))
    assert set(model_state) == set(Net(8, 4).state_dict())
    assert optimizer_state["param_groups"][0]["lr"] == 0.01
    cifar10_pytorch.test_best_model(result.config, result.checkpoint, smoke_test=True)
    assert "Best trial test set accuracy: " in capsys.readouterr().out
