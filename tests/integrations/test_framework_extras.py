"""Without its framework, each callback module's import names the extra
to install (runs with or without Keras and Lightning installed)."""

from __future__ import annotations

import importlib
import sys

import pytest


@pytest.mark.parametrize(
    ("module", "missing", "extra"),
    [
        ("tunecore.integration.keras", ["keras"], "keras"),
        ("tunecore.integrations.keras", ["keras"], "keras"),
        (
            "tunecore.integration.pytorch_lightning",
            ["lightning", "lightning.pytorch", "pytorch_lightning"],
            "lightning",
        ),
    ],
)
def test_the_import_names_the_extra(
    module: str, missing: list[str], extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in missing:
        monkeypatch.setitem(sys.modules, name, None)
    for loaded in ("tunecore.integration.keras", "tunecore.integrations.keras", module):
        monkeypatch.delitem(sys.modules, loaded, raising=False)
    with pytest.raises(ImportError, match=rf"needs {extra}: pip install 'tunecore\[{extra}\]'"):
        importlib.import_module(module)


def test_the_ray_train_callback_without_ray_train_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray.train", None)  # as where fsspec is missing
    monkeypatch.delitem(sys.modules, "tunecore.integration.ray_train", raising=False)
    with pytest.raises(ImportError, match=r"needs Ray Train: pip install 'ray\[train\]'"):
        importlib.import_module("tunecore.integration.ray_train")
