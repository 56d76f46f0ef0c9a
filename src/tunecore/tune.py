"""`ray.tune.tune`, the module of Ray's `run` and `run_experiments`
(`from ray.tune.tune import run_experiments`, as Ray's docstrings write)."""

from tunecore.api.run import run, run_experiments

__all__ = ["run", "run_experiments"]
