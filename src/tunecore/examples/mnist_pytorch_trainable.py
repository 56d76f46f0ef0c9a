"""Ray Tune's `ray.tune.examples.mnist_pytorch_trainable`: `TrainMNIST`,
the class trainable of Ray's Trainable docs (`from
ray.tune.examples.mnist_pytorch_trainable import TrainMNIST`), on
tunecore's `Trainable`.

As Ray 2.60's: `setup` opens MNIST (`mnist_pytorch.get_data_loaders`) and
builds a `ConvNet` with SGD at `config.get("lr", 0.01)` and
`config.get("momentum", 0.9)`, on CUDA when `config.get("use_gpu")` and a
GPU is there; each `step` trains one short epoch and returns
`{"mean_accuracy": ...}`; a checkpoint is the state dict in `model.pth`.

Needs the `torchvision` extra (`pip install 'tunecore[torchvision]'`).
"""

from __future__ import annotations

import os
from typing import Any

from tunecore.examples._extra import missing_extra
from tunecore.examples.mnist_pytorch import ConvNet, get_data_loaders, test_func, train_func
from tunecore.shell.trainable import Trainable

try:
    import torch
    from torch import optim
except ModuleNotFoundError as error:  # pragma: no cover - mnist_pytorch fails first
    raise missing_extra(__name__, error) from error

__all__ = ["TrainMNIST"]

MODEL_FILE = "model.pth"
"""The state dict's file in a checkpoint directory."""


class TrainMNIST(Trainable):
    """`ConvNet` on MNIST, one short epoch per step (module docstring)."""

    def setup(self, config: dict[str, Any]) -> None:
        use_cuda = bool(config.get("use_gpu")) and torch.cuda.is_available()
        self.device = torch.device("cuda" if use_cuda else "cpu")
        self.train_loader, self.test_loader = get_data_loaders()
        self.model = ConvNet().to(self.device)
        self.optimizer = optim.SGD(
            self.model.parameters(),
            lr=config.get("lr", 0.01),
            momentum=config.get("momentum", 0.9),
        )

    def step(self) -> dict[str, Any]:
        train_func(self.model, self.optimizer, self.train_loader, device=self.device)
        return {"mean_accuracy": test_func(self.model, self.test_loader, self.device)}

    def save_checkpoint(self, checkpoint_dir: str) -> None:
        torch.save(self.model.state_dict(), os.path.join(checkpoint_dir, MODEL_FILE))

    def load_checkpoint(self, checkpoint_dir: str) -> None:  # type: ignore[override]
        self.model.load_state_dict(torch.load(os.path.join(checkpoint_dir, MODEL_FILE)))
