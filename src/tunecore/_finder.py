"""A meta-path finder for `tunecore.` module names that are no files of
tunecore: Ray's modules tunecore refuses (`_not_provided`) or passes
through to Ray Train (`_ray_train_modules`)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

SpecFor = Callable[[str], importlib.machinery.ModuleSpec | None]
"""The spec of a `tunecore.` module name (or an ImportError saying why
there is none); None leaves the name to the finders after it."""


class _NameFinder(importlib.abc.MetaPathFinder):
    """Consulted after the real finders (appended last), so it only sees
    `tunecore.` names no file answers."""

    def __init__(self, spec_for: SpecFor) -> None:
        self.spec_for = spec_for

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("tunecore."):
            return None
        return self.spec_for(fullname)


def install_finder(spec_for: SpecFor) -> None:
    """Append a finder asking `spec_for`, once for each `spec_for`."""
    if not any(isinstance(f, _NameFinder) and f.spec_for is spec_for for f in sys.meta_path):
        sys.meta_path.append(_NameFinder(spec_for))
