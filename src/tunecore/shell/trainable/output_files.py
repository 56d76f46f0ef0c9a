"""Where `log_to_file` may send a trial's output: inside its trial directory.

The names are stored in the event log's header (`RunSettings.output_files`)
and a resume reopens them, so a crafted log could otherwise aim every
trial's stdout at any file the user can write. Ray joins the name to the
trial directory, which an absolute name or `..` simply leaves; here a name
is a relative path that stays inside the trial directory:

- `confined_name` checks the text (when `RunConfig` is built, and when a
  restore reads the header): not empty, not absolute, no `..` part, and
  not one of the files tunecore itself keeps in the trial directory
  (result.json, progress.csv, error.txt, params.json, a `checkpoint_*`
  directory): the trial's output would be mixed into them, and they are
  rewritten and replaced under the open stream;
- `open_in_trial_dir` checks the file system when the file is opened: the
  path, symlinks resolved, must still be inside the trial directory.
"""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import TextIO

from tunecore.shell.trial_files import TRIAL_FILES

_RULE = "a path relative to the trial directory that stays inside it, e.g. 'stdout.txt'"
_OWN = TRIAL_FILES
_OWN_PREFIX = "checkpoint_"


def confined_name(field: str, value: object) -> str:
    """`value` if it is a relative path without `..`, else a `ValueError`
    naming `field` and `value`."""
    if not isinstance(value, str) or "\x00" in value or not PurePath(value).parts:
        raise ValueError(f"{field}={value!r} is not a file name; expected {_RULE}")
    path = PurePath(value)
    if path.is_absolute():
        raise ValueError(f"{field}={value!r} is an absolute path; expected {_RULE}")
    if ".." in path.parts:
        raise ValueError(f"{field}={value!r} leaves the trial directory ('..'); expected {_RULE}")
    first = path.parts[0]
    if first in _OWN or first.startswith(_OWN_PREFIX):
        raise ValueError(
            f"{field}={value!r} names a file tunecore keeps in the trial directory "
            f"({', '.join(sorted(_OWN))}, {_OWN_PREFIX}*); expected {_RULE}"
        )
    return value


def open_in_trial_dir(trial_dir: str, name: str, field: str = "log_to_file") -> TextIO:
    """`trial_dir/name` opened to append, line-buffered, once `name` has
    passed `confined_name` and the path, symlinks resolved, is still inside
    `trial_dir` (a symlink there pointing elsewhere is refused)."""
    confined_name(field, name)
    root = os.path.realpath(trial_dir)
    target = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([root, target]) != root:
        raise ValueError(
            f"{field}={name!r} leads outside the trial directory {trial_dir} "
            f"(to {target}, through a symlink); expected {_RULE}"
        )
    return open(target, "a", buffering=1)
