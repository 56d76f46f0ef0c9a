"""Every msgspec struct tunecore defines, as stored data sees it: its tag,
whether it is encoded as an array, and its fields with their types and
whether they are required. A field goes by the name it is stored under
(its attribute may be named otherwise: `TrialState.stats_beyond_last`).
`tests/schema/structs.json` holds the manifest as it was;
`test_schema_evolution.py` checks the code against it by the rules of
docs/architecture.md ("Schema evolution").

Write it again, after a change the rules allow, with

    python -m tests.schema.manifest
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path
from typing import Any

import msgspec

import tunecore

MANIFEST = Path(__file__).parent / "structs.json"

NEVER_STORED = {
    "ExperimentState": "the step's working state: a snapshot stores an "
    "ExperimentSnapshot and every derived field is recomputed from its trials",
    "Applied": "the lifecycle table's answer to one event (a state and the commands "
    "for the shell), carried out at once: the log keeps the event",
    "JudgedResult": "a result with the answer to it, built by the step on every result "
    "and handed to the table: the log keeps the ResultReported",
}
"""Structs that exist only in memory, with the reason: the rules do not
bind them (a new one must be added here by name, with its reason)."""

OPTIONAL_PACKAGES = ("tunecore.integration.", "tunecore.integrations.", "tunecore.examples.")
"""Ray's integrations (XGBoost, MLflow, Keras, ...) and example helper
modules (PyTorch): each module imports its package, which only its extra
installs, so they are left out. They define no struct: what they report is
stored by `tunecore.report`'s own."""

_MODULE_PATH = re.compile(r"\b(?:[a-z_][a-z0-9_]*\.)+(?=[A-Z])")


_PACKED = " | Raw"
"""A union with `msgspec.Raw` (`TrialState.recorded_result`): the field
may hold its value already encoded, which msgspec writes as it is, the
bytes of the other type's encoding; it decodes as the other type. Stored
data sees the other type alone."""


def type_name(annotation: object) -> str:
    """A field's type without module paths (`tunecore.model.trial.Location`
    is `Location`): moving a class to another module changes no stored
    byte; nor does a value kept packed (`_PACKED`)."""
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    return _MODULE_PATH.sub("", text.replace("typing.", "")).replace(_PACKED, "")


def current() -> dict[str, dict[str, Any]]:
    """The manifest of the code as it is, by class name (names are unique)."""
    structs: dict[str, dict[str, Any]] = {}
    for info in pkgutil.walk_packages(tunecore.__path__, "tunecore."):
        if info.name.endswith(".__main__"):  # a command: importing it runs it
            continue
        if info.name.startswith(OPTIONAL_PACKAGES):  # they store nothing, and need their extras
            continue
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if not (
                inspect.isclass(cls)
                and issubclass(cls, msgspec.Struct)
                and cls.__module__ == module.__name__
                and cls.__qualname__ not in NEVER_STORED
            ):
                continue
            config = cls.__struct_config__
            structs[cls.__qualname__] = {
                "tag": config.tag,
                "array_like": config.array_like,
                "fields": [
                    f"{field.encode_name}: {type_name(field.type)}"
                    + ("" if field.required else " = ...")
                    for field in msgspec.structs.fields(cls)
                ],
            }
    return dict(sorted(structs.items()))


def recorded() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return data


if __name__ == "__main__":
    MANIFEST.write_text(json.dumps(current(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {MANIFEST}")
