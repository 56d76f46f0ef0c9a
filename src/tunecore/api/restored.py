"""What a restored experiment takes from the user, checked against its log.

A log is data, and data read from disk never decides what code runs or
where output goes. The header records the trainable (`LogHeader.trainable`,
an import path `module:qualname` or a registered name) and the output files
(`RunSettings.output_files`); a crafted header could name
`subprocess:getoutput`, whose param space then runs as shell commands, or
aim every trial's stdout at any file. So:

- The code comes from the user: `Tuner.restore(path, trainable=...)` (a
  function, a class, a registered name, or an import path the user typed:
  importing that is the user's choice), `tunecore resume --trainable`, or,
  given nothing, the recorded name if this process registered it
  (`register_trainable`). An import path in the log is never imported.
- The code given must be the one recorded, as Ray checks ("pass in the same
  trainable"): its name (`trainable_name`) is the recorded one, the recorded
  name is registered to this very object, or, as Ray compares, the
  function's or class's own name is the recorded one's (a function from a
  script, recorded by its bare name, given back from a module; a second
  `with_parameters(train)` in one process, recorded as
  `with_parameters(train)_2`: a name is numbered when the process that ran
  the experiment had registered another object under it, as a notebook
  that defines `train` again does). A function whose module was
  renamed (`old.mod:train` recorded, `new.mod:train` given) is accepted that
  way too, with a warning naming both. Any other difference is a
  `TrainableMismatchError` naming both; there is no override (Ray has none).
- The output files must be inside the trial directory (`confined_name`); a
  header that says otherwise is a `LogError`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from pathlib import Path

from tunecore.core.naming import names_the_same
from tunecore.shell.eventlog import LogError, RunSettings, log_path
from tunecore.shell.resume_hint import resume_command_line
from tunecore.shell.trainable import (
    TrainableTarget,
    registered_trainable,
    resolve_trainable,
    trainable_name,
    validate_trainable,
)
from tunecore.shell.trainable.output_files import confined_name

Trainable = Callable[..., object] | type | str
"""What a user passes as a trainable: a function, a class, or a name."""


class TrainableNotGivenError(ValueError):
    """A restore was given no trainable, and the log's is not registered here."""


class TrainableMismatchError(ValueError):
    """A restore was given another trainable than the one the experiment ran."""


def restored_trainable(
    recorded: str, given: Trainable | None, experiment_dir: Path
) -> TrainableTarget:
    """The code to resume the experiment in `experiment_dir` with: `given`,
    checked against `recorded` (the log's name), or without `given` the
    object this process registered as `recorded` (see the module doc)."""
    if given is None:
        found = registered_trainable(recorded)
        if found is None:
            raise TrainableNotGivenError(
                f"the experiment in {experiment_dir} ran the trainable {recorded!r}, which "
                "this process has not registered, and a log never decides what code is "
                f"imported: pass it, Tuner.restore({str(experiment_dir)!r}, trainable=...) "
                "(the function or class itself, or its 'module:function'), or "
                f"`{resume_command_line(str(experiment_dir))}`"
            )
        return found
    target = resolve_trainable(given) if isinstance(given, str) else validate_trainable(given)
    shown = given if isinstance(given, str) else trainable_name(target)
    if recorded in (shown, trainable_name(target)) or registered_trainable(recorded) is target:
        return target
    if isinstance(target, functools.partial) and names_the_same(recorded, "partial"):
        return target  # logged before a partial was named by its function, as Ray names it
    own = getattr(target, "__qualname__", None)
    if own is None or not names_the_same(_qualname(recorded), own):
        raise TrainableMismatchError(
            f"the trainable given, {shown!r}, is not the one the experiment in "
            f"{experiment_dir} ran, {recorded!r}: resume it with the same trainable "
            "(the name in the log is only checked, never imported)"
        )
    if ":" in recorded:
        warnings.warn(
            f"the experiment in {experiment_dir} ran {recorded!r}; it resumes with "
            f"{shown!r}, taken for the same {_qualname(recorded)!r} in another module",
            stacklevel=3,
        )
    return target


def restored_output_files(settings: RunSettings, experiment_dir: Path) -> tuple[str, str] | None:
    """The header's `log_to_file` names, or a `LogError` if one would leave
    the trial directory (only a crafted or damaged log holds such a name:
    `RunConfig` refuses them)."""
    if settings.output_files is None:
        return None
    for name in settings.output_files:
        try:
            confined_name("RunSettings.output_files", name)
        except ValueError as error:
            raise LogError(f"{log_path(experiment_dir)}: the header's {error}") from None
    return settings.output_files


def _qualname(name: str) -> str:
    """The function's own (qualified) name in an import path or a registered name."""
    return name.rpartition(":")[2]
