"""The one table from a setting of the Python API (a field of `TuneConfig`
or `RunConfig`) to the flag of the command line that sets it. Messages of
the library name a setting through `tunecore.api.spelling.setting`, which
the command line points at this table (`--seed 7`, not
`TuneConfig(seed=7)`); messages already written (pydantic's) are
translated with it by `in_flags`."""

from __future__ import annotations

import re

CONFIG_FLAGS: dict[str, str] = {
    "metric": "--metric",
    "mode": "--mode",
    "num_samples": "--num-samples",
    "search_alg": "--search",
    "max_concurrent_trials": "--max-concurrent-trials",
    "scheduler": "--scheduler",
    "seed": "--seed",
    "resources_per_trial['cpu']": "--cpus-per-trial",
    "resources_per_trial['gpu']": "--gpus-per-trial",
    "name": "--name",
    "storage_path": "--storage-path",
    "stop": "--stop",
    "max_failures": "--max-failures",
    "verbose": "--verbose",
    "address": "--address",
    "executor": "--executor",
}

_WRITTEN = re.compile(
    r"(?<![\w.\[])(" + "|".join(re.escape(field) for field in CONFIG_FLAGS) + r")="
)


def in_flags(message: str) -> str:
    """`message` with each `field=` of a setting written as its flag:
    `num_samples=0 would run nothing` -> `--num-samples=0 would run nothing`."""
    return _WRITTEN.sub(lambda match: f"{CONFIG_FLAGS[match.group(1)]}=", message)


def flag_of(field: str) -> str:
    """The flag of a setting; the field itself for one no flag sets."""
    return CONFIG_FLAGS.get(field, field)
