"""What `tunecore.examples` holds besides the MNIST modules: Ray's own
modules that report nothing (`pbt_dcgan_mnist.common`, `utils`) given as
they are, the ImportError naming the extra where a framework is missing,
and the not-provided message for Ray's example scripts. Runs with or
without torch installed."""

from __future__ import annotations

import importlib
import sys

import pytest

from tunecore._not_provided import NotProvidedError


def _forget(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for module in modules:
        monkeypatch.delitem(sys.modules, module, raising=False)


@pytest.mark.parametrize(
    "module",
    [
        "tunecore.examples.mnist_pytorch",
        "tunecore.examples.mnist_pytorch_trainable",
        "tunecore.examples.cifar10_pytorch",
    ],
)
def test_without_torchvision_the_import_names_the_extra(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "torchvision", None)
    _forget(
        monkeypatch,
        "tunecore.examples.mnist_pytorch",
        "tunecore.examples.mnist_pytorch_trainable",
        "tunecore.examples.cifar10_pytorch",
    )
    with pytest.raises(
        ImportError,
        match=r"needs torch, torchvision and filelock \(.*\): pip install 'tunecore\[torchv",
    ):
        importlib.import_module(module)


def test_without_torch_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    _forget(monkeypatch, "tunecore.examples.mnist_pytorch")
    with pytest.raises(
        ImportError,
        match=r"needs torch, .*\(import of torch halted.*\): pip install 'tunecore\[torchvision\]'",
    ):
        importlib.import_module("tunecore.examples.mnist_pytorch")


def test_utils_without_tensorflow_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tensorflow", None)
    _forget(monkeypatch, "tunecore.examples.utils", "ray.tune.examples.utils")
    with pytest.raises(
        ImportError,
        match=r"needs TensorFlow, scikit-learn and Ray Tune's dependencies \(.*\): pip inst",
    ):
        importlib.import_module("tunecore.examples.utils")


def test_the_dcgan_helpers_are_rays_own_module() -> None:
    pytest.importorskip("torchvision")
    pytest.importorskip("matplotlib")
    pytest.importorskip("scipy")
    common = importlib.import_module("tunecore.examples.pbt_dcgan_mnist.common")
    ray_common = importlib.import_module("ray.tune.examples.pbt_dcgan_mnist.common")
    assert common is ray_common
    namespace: dict[str, object] = {}
    exec("from tunecore.examples.pbt_dcgan_mnist.common import Generator", namespace)
    assert namespace["Generator"] is ray_common.Generator
    assert common.MODEL_PATH.endswith(".ray/models/mnist_cnn.pt")


@pytest.mark.parametrize(
    "module", ["tunecore.examples.mnist_ptl_mini", "tunecore.examples.pbt_transformers.utils"]
)
def test_rays_other_example_modules_say_what_tunecore_provides(module: str) -> None:
    with pytest.raises(NotProvidedError, match=r"tunecore\.examples\.pbt_function, and with"):
        importlib.import_module(module)
