"""The ImportError a torch example module raises when the `torchvision`
extra is not installed: it names the extra, not just the missing module."""

from __future__ import annotations

EXTRA = "torchvision"


def missing_extra(module: str, error: ModuleNotFoundError) -> ImportError:
    """The error for `module`, whose import of `error.name` failed."""
    return ImportError(
        f"{module} needs torch and torchvision ({error.name} is not installed): "
        f"pip install 'tunecore[{EXTRA}]'"
    )
