<<<<<<< HEAD
"""`tests/typing/user_overrides.py`, and `examples/custom_scheduler.py`
(a scheduler of one's own, given `mode="min"`), as a user type-checks
them: plain
=======
"""`tests/typing/user_overrides.py` (Ray-style overrides) and
`user_library.py` (tunecore embedded as a typed library) as a user
type-checks them: plain
>>>>>>> qa47
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
<<<<<<< HEAD
    user = ROOT / "tests" / "typing" / "user_overrides.py"
    example = ROOT / "examples" / "custom_scheduler.py"
=======
    user = ROOT / "tests" / "typing" / program
>>>>>>> qa47
    report, errors, status = api.run(
        ["--strict", "--config-file", "", "--cache-dir", str(tmp_path), str(user), str(example)]
    )
    assert status == 0, report + errors
