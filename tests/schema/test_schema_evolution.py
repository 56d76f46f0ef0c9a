"""The structs tunecore stores (event log, snapshots, specs) change only in
ways that keep old data readable (docs/architecture.md, "Schema
evolution"): checked against the manifest `structs.json`, written by
`python -m tests.schema.manifest` when a change the rules allow is made.

- A struct is never removed or renamed, and its tag never changes: old
  data names it.
- A field is never removed, renamed or retyped.
- A new field has a default (old data lacks it).
- An array-like struct only grows at its end (its fields are positions).
"""

from __future__ import annotations

import pytest

from tests.schema.manifest import current, recorded

RECORDED = recorded()
NOW = current()


def _name(field: str) -> str:
    return field.split(":", 1)[0]


def test_every_struct_is_in_the_manifest() -> None:
    new = sorted(set(NOW) - set(RECORDED))
    assert not new, (
        f"new structs {new}: record them with `python -m tests.schema.manifest` "
        "(the rules then hold them to what they are now)"
    )


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_a_struct_keeps_what_stored_data_relies_on(name: str) -> None:
    assert name in NOW, f"{name} was removed or renamed: data that names it no longer loads"
    was, now = RECORDED[name], NOW[name]
    assert now["tag"] == was["tag"], f"{name}'s tag changed: data tagged {was['tag']!r} is lost"
    assert now["array_like"] == was["array_like"], f"{name} changed its encoding"
    fields = {_name(f): f for f in now["fields"]}
    for field in was["fields"]:
        assert _name(field) in fields, f"{name}.{_name(field)} was removed or renamed"
        assert fields[_name(field)] == field, f"{name}: {field!r} became {fields[_name(field)]!r}"
    known = {_name(f) for f in was["fields"]}
    for field in now["fields"]:
        if _name(field) not in known:
            assert field.endswith("= ..."), f"{name}: the new field {field!r} needs a default"
    if was["array_like"]:
        assert now["fields"][: len(was["fields"])] == was["fields"], (
            f"{name} is array-like: fields are positions, so new ones go at the end"
        )
