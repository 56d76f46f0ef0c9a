"""`tests/typing/user_overrides.py` (Ray-style overrides, checked with
`examples/custom_scheduler.py`: a scheduler of one's own, given
`mode="min"`) and `user_library.py` (tunecore embedded as a typed library)
as a user type-checks them: plain
`mypy --strict` with tunecore on the path, none of this repository's mypy
settings (`mypy.ini` enables more error codes, which a user's run would
not, so an ignore tunecore needs only under those settings shows there as
unused)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.parametrize("program", ["user_overrides.py", "user_library.py"])
def test_a_users_file_passes_plain_mypy_strict(
    program: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYPYPATH", os.pathsep.join([str(ROOT / "src"), str(ROOT / "typings")]))
    user = ROOT / "tests" / "typing" / program
    example = ROOT / "examples" / "custom_scheduler.py"
    report, errors, status = api.run(
        ["--strict", "--config-file", "", "--cache-dir", str(tmp_path), str(user), str(example)]
    )
    assert status == 0, report + errors
