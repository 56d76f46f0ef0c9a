"""The names of the files tunecore writes in a trial's directory, as Ray Tune
names them. Their own module because the worker needs them too (it stores
no output of a trial over them: `shell.trainable.output_files`,
`shell.trainable.persist`) and should not load the driver's storage to
learn four names."""

import re

PARAMS_FILE = "params.json"
RESULT_FILE = "result.json"
PROGRESS_FILE = "progress.csv"
ERROR_FILE = "error.txt"

TRIAL_FILES = frozenset({PARAMS_FILE, RESULT_FILE, PROGRESS_FILE, ERROR_FILE})
"""The files the driver keeps in a trial's directory."""

_SAVED_DIR = re.compile(r"(checkpoint|exploit)_[0-9]+(_[1-9][0-9]*)?(_g[1-9][0-9]*)?")
"""The directories a trial's checkpoints are saved and copied to
(`checkpoint_000003`, `checkpoint_000003_1_g2`, `exploit_000002`)."""


def is_tunecore_entry(name: str) -> bool:
    """Whether the top-level entry `name` of a trial's directory is one
    tunecore keeps there itself: a worker never stores a trial's output
    (`log_to_file`, `sync_artifacts`) over one."""
    return name in TRIAL_FILES or _SAVED_DIR.fullmatch(name) is not None
