"""Run the compat scripts on Ray Tune itself, to check what they assert.

Not a test: a maintainer's tool. Each script's imports are rewritten back
(`import tunecore as tune` -> `from ray import tune`, `tunecore.X` ->
`ray.tune.X`, `tunecore.integrations.X` -> `ray.air.integrations.X`) and
the script runs in a fresh interpreter with HOME set to a temporary
directory. Needs `ray[tune]` importable (and, for the integrations'
scripts, xgboost, lightgbm, mlflow-skinny with sqlalchemy and alembic, and
scikit-learn); in the project's environment only pyarrow and fsspec are
missing, so:

    pip install --target /tmp/raytune_deps pyarrow fsspec
    PYTHONPATH=/tmp/raytune_deps python tests/compat/on_ray_tune.py [SCRIPT_NAME ...]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPTS = Path(__file__).parent / "scripts"

_BACK = [
    (re.compile(r"^import tunecore as tune$", re.M), "from ray import tune"),
    (re.compile(r"^import tunecore as train$", re.M), "from ray import train"),
    (re.compile(r"^from tunecore\.constants import", re.M), "from ray.air.constants import"),
    (re.compile(r"^from tunecore\.integrations\.", re.M), "from ray.air.integrations."),
    (re.compile(r"^from tunecore\.config import", re.M), "from ray.air.config import"),
    (re.compile(r"^from tunecore\.([\w.]+) import", re.M), r"from ray.tune.\1 import"),
    (
        re.compile(r"^from tunecore import ScalingConfig$", re.M),
        "from ray.train import ScalingConfig",
    ),
    (re.compile(r"^from tunecore import session$", re.M), "from ray.air import session"),
    (re.compile(r"^from tunecore import", re.M), "from ray.tune import"),
]


def as_ray_tune(source: str) -> str:
    """The script as Ray Tune's documentation writes it."""
    for pattern, replacement in _BACK:
        source = pattern.sub(replacement, source)
    return source


def main(names: list[str]) -> int:
    scripts = [SCRIPTS / f"{n.removesuffix('.py')}.py" for n in names] or sorted(
        SCRIPTS.glob("*.py")
    )
    failed = 0
    for script in scripts:
        with tempfile.TemporaryDirectory() as home:
            ray_script = Path(home) / script.name
            ray_script.write_text(as_ray_tune(script.read_text()))
            env = {**os.environ, "HOME": home, "RAY_AIR_NEW_OUTPUT": "0"}
            started = time.monotonic()
            run = subprocess.run(
                [sys.executable, str(ray_script)],
                cwd=home,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            took = time.monotonic() - started
        status = "ok" if run.returncode == 0 else "FAILED"
        failed += run.returncode != 0
        print(f"{script.name}: {status} ({took:.1f} s)")
        if run.returncode != 0:
            print(run.stderr[-3000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
