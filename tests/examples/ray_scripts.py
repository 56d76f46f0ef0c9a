"""Ray Tune's own example scripts that import `ray.tune.examples`'
helper modules, taken from the installed `ray` wheel (tunecore depends
on it), with their imports rewritten as docs/ray-examples.md says, and run
as a user runs them: `python script.py --smoke-test` in a process of its
own, starting a Ray of its own, with HOME a directory holding a synthetic
MNIST where torchvision reads it (`~/data/MNIST/raw`), since no data host
is reachable; or, where RAY_ADDRESS names a running Ray (a machine too
loaded to start one within Ray's 30 s), joining it: that Ray must have
been started with the same HOME. `--on-ray-tune` runs the script as it is (in an environment
with `ray[tune]`, torch and torchvision), for the same outcome on Ray::

    python -m tests.examples.ray_scripts [--on-ray-tune] pbt_convnet_example
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import ray

from tests.examples.mnist_files import write_mnist

EXAMPLES = Path(ray.__file__).parent / "tune" / "examples"
SCRIPTS = (
    "mnist_pytorch",
    "mnist_pytorch_trainable",
    "pbt_convnet_example",
    "pbt_convnet_function_example",
)
"""Ray's scripts whose smoke test needs MNIST, and nothing else from outside."""

_REWRITES = [
    (re.compile(r"^from ray import tune$", re.M), "import tunecore as tune"),
    (
        re.compile(r"^from ray\.(?:tune|train|air)(\.[\w.]+)? import", re.M),
        r"from tunecore\1 import",
    ),
    (re.compile(r"\bray\.tune\."), "tunecore."),
]


def rewritten(source: str) -> str:
    """`source` with Ray Tune's imports rewritten to tunecore's, and dotted
    `ray.tune.X` in code read as `tunecore.X` (which then needs `import
    tunecore`, added after `import ray`, where Ray's `import ray` reached
    it)."""
    for pattern, replacement in _REWRITES:
        source = pattern.sub(replacement, source)
    if re.search(r"^(?!from |import ).*\btunecore\.", source, re.M):
        source = re.sub(r"^import ray$", "import ray\nimport tunecore", source, count=1, flags=re.M)
    return source


_JOINING = (
    "import runpy, sys, ray; init = ray.init; ray.init = lambda *a, **k: init(); "
    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)
"""Runs the script with its `ray.init(...)` joining the Ray at RAY_ADDRESS
(whose arguments, `num_cpus=2`, Ray refuses when joining), as
tests/compat/test_compat.py does."""


def run(name: str, home: Path, on_ray_tune: bool = False, timeout: float = 900) -> str:
    """Run Ray's `examples/<name>.py --smoke-test` with `home` as HOME and
    working directory (MNIST written there first); its output, or
    CalledProcessError with it."""
    source = (EXAMPLES / f"{name}.py").read_text(encoding="utf-8")
    script = home / f"{name}.py"
    script.write_text(source if on_ray_tune else rewritten(source), encoding="utf-8")
    write_mnist(home / "data")
    env = {**os.environ, "HOME": str(home)}
    if env.get("PYTHONPATH"):  # the script runs in `home`: a relative entry would miss
        env["PYTHONPATH"] = os.pathsep.join(
            os.path.abspath(entry) for entry in env["PYTHONPATH"].split(os.pathsep)
        )
    command = [sys.executable, str(script), "--smoke-test"]
    if os.environ.get("RAY_ADDRESS"):  # join that Ray: its workers' HOME must be `home`
        command[1:2] = ["-c", _JOINING, str(script)]
    done = subprocess.run(
        command,
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    output = done.stdout + done.stderr
    if done.returncode:
        raise subprocess.CalledProcessError(done.returncode, str(script), output)
    return output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--on-ray-tune", action="store_true")
    parser.add_argument("--home", help="the HOME to use (that of the Ray at RAY_ADDRESS)")
    parser.add_argument("names", nargs="*", default=list(SCRIPTS))
    args = parser.parse_args()
    for name in args.names:
        with tempfile.TemporaryDirectory(dir=args.home) as scratch:
            try:
                output = run(name, Path(args.home or scratch), args.on_ray_tune)
            except subprocess.CalledProcessError as failed:
                print(f"== {name}: FAILED ({failed.returncode})\n{failed.output}")
                continue
            print(f"== {name}: passed\n{output}")


if __name__ == "__main__":
    main()
