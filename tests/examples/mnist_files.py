"""A small MNIST-shaped data set written where torchvision's `MNIST`
reads it (`<root>/MNIST/raw/`, the four idx files unpacked), so that
`datasets.MNIST(root, download=True)` finds it and downloads nothing: the
machines the tests run on reach no data host.

Each image is noise with one bright row whose position is its label, so a
small network learns it in a few short epochs."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

_FILES = {
    True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
_IMAGES_MAGIC, _LABELS_MAGIC = 2051, 2049  # idx: unsigned bytes, 3 and 1 dimensions
SIDE = 28


def write_mnist(root: Path, train_count: int = 1024, test_count: int = 320, seed: int = 0) -> None:
    """The training and test sets under `root/MNIST/raw`."""
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    generator = np.random.default_rng(seed)
    for train, count in ((True, train_count), (False, test_count)):
        labels = generator.integers(0, 10, size=count, dtype=np.uint8)
        images = generator.integers(0, 230, size=(count, SIDE, SIDE), dtype=np.uint8)
        images[np.arange(count), labels.astype(np.intp) * 2 + 4, :] = 255
        images_file, labels_file = _FILES[train]
        (raw / images_file).write_bytes(
            struct.pack(">IIII", _IMAGES_MAGIC, count, SIDE, SIDE) + images.tobytes()
        )
        (raw / labels_file).write_bytes(struct.pack(">II", _LABELS_MAGIC, count) + labels.tobytes())
