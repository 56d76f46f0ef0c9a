"""The `tunecore resume` command tunecore's messages suggest, written so
that a user can paste it into a shell and run it as it is: the directory
(or URI, whose query holds `&`) and the trainable quoted for the shell.

`--trainable` is named only from code the user gave this process (the
`MODULE:FUNCTION` of `tunecore run`, the trainable a run or resume just
ran), never from a log alone: a log never decides what code is imported,
and a command offered to be pasted would import it. Without such a name,
or with one that is no import path (a function of the script that was
run, `__main__`, or a registered name, which the command line cannot
import), the command keeps the placeholder `MODULE:FUNCTION`."""

from __future__ import annotations

import shlex

PLACEHOLDER = "MODULE:FUNCTION"


def resume_command_line(
    where: str, trainable: str | None = None, address: str | None = None
) -> str:
    """`tunecore resume WHERE --trainable TRAINABLE [--address ADDRESS]`,
    each value quoted for a shell; `trainable` only when it is an import
    path `module:function` the user gave (module doc), else the
    placeholder."""
    importable = trainable is not None and ":" in trainable
    words = ["tunecore", "resume", shlex.quote(where), "--trainable"]
    words.append(shlex.quote(trainable) if trainable and importable else PLACEHOLDER)
    if address is not None:
        words += ["--address", shlex.quote(address)]
    return " ".join(words)
