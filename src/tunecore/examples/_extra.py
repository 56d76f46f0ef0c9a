"""What a `tunecore.examples` module needs that tunecore does not bring:
the ImportError naming what to install, and Ray's own module standing in
for one that never reports to Tune."""

from __future__ import annotations

import importlib
import sys

TORCHVISION = ("torch, torchvision and filelock", "'tunecore[torchvision]'")
"""What the PyTorch example modules need, and the extra that brings it."""


def missing_extra(
    module: str, error: ImportError, needs: tuple[str, str] = TORCHVISION
) -> ImportError:
    """The error for `module`, whose import failed with `error`: what it
    needs, and the pip arguments that install it."""
    what, install = needs
    return ImportError(f"{module} needs {what} ({error}): pip install {install}")


def stand_in(module: str, needs: tuple[str, str]) -> None:
    """Make `module` Ray's module of the same name under `ray.tune.`: for
    Ray's helper modules that call nothing of Ray Tune (a model, a data
    loader), Ray's code is the behaviour wanted, so `import module` gives
    Ray's module object itself (the import system returns what the module
    put in sys.modules). A package it needs and lacks, or Ray Tune's own
    (`ray.tune` refuses to import without fsspec, which tunecore does not
    need), is an ImportError saying what to install (`needs`, as for
    `missing_extra`)."""
    ray_name = "ray.tune." + module.removeprefix("tunecore.")
    try:
        sys.modules[module] = importlib.import_module(ray_name)
    except ImportError as error:
        raise missing_extra(module, error, needs) from error
