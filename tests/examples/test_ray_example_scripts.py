"""Ray Tune's own example scripts that import `ray.tune.examples`' helper
modules, from the installed `ray` wheel with only their imports rewritten
(tests/examples/ray_scripts.py), run as `python script.py --smoke-test` on
a synthetic MNIST: each must finish as it does on Ray Tune 2.60 given the
same data (docs/ray-examples.md, rows 220-223). Each starts a Ray of its
own, in a process of its own, as a user's run does.

Runs where torch and torchvision are installed; skipped elsewhere."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.examples.ray_scripts import run

pytest.importorskip("torch")
pytest.importorskip("torchvision")

pytestmark = pytest.mark.slow

OUTCOME = {
    "mnist_pytorch": "Best config is:",
    "mnist_pytorch_trainable": "Best config is:",
    "pbt_convnet_example": "",  # ends by reading the best checkpoint, printing nothing
    "pbt_convnet_function_example": "best model accuracy: ",
}
"""What each script prints when it ends well (it asserts the rest itself)."""


@pytest.mark.parametrize("name", sorted(OUTCOME))
def test_rays_script_runs_on_tunecore(name: str, tmp_path: Path) -> None:
    try:
        output = run(name, tmp_path)
    except subprocess.CalledProcessError as failed:
        pytest.fail(f"{name} exited {failed.returncode}:\n{failed.output[-4000:]}")
    assert OUTCOME[name] in output
