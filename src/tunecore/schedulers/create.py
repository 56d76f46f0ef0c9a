"""Ray Tune's `create_scheduler`: a scheduler chosen by name, as from a
command-line option (`tune.create_scheduler("asha", metric=..., mode=...)`)."""

from __future__ import annotations

from typing import Any

from tunecore._by_name import create_by_name
from tunecore.core.schedulers.registry import SCHEDULERS


def create_scheduler(scheduler: str, **kwargs: Any) -> Any:
    """The scheduler named `scheduler` (any case), built with those of
    `kwargs` its class takes; the rest are dropped, as in Ray Tune. An
    unknown name is a `ValueError` listing the known ones."""
    return create_by_name(
        "create_scheduler: scheduler",
        SCHEDULERS,
        scheduler,
        kwargs,
        "Ray Tune's vizier-free names all build here",
    )
