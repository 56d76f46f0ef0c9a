"""How trials are named in logs and directories, and how failures are
written to error.txt. Pure formatting: the shell only writes the text."""

from __future__ import annotations

import datetime

from tunecore.model import TrialSpec


def trial_name(spec: TrialSpec, *, include_trial_id: bool = True) -> str:
    """The custom name if one was given; else the trainable's name, the
    `env` config value if any (the API stores classes by their name), and
    the trial id, joined by '_' with every '/' replaced so it can name a
    file. A trainable stored by import path (`pkg.module:train`) is named by
    its object (`train`), as Ray names it: `train_0a1b2_00001`."""
    if spec.custom_name:
        return spec.custom_name
    identifier = display_name(spec.trainable_name)
    if "env" in spec.config:
        identifier = f"{identifier}_{spec.config['env']}"
    if include_trial_id:
        identifier = f"{identifier}_{spec.trial_id}"
    return identifier.replace("/", "_")


PERTURBED = "@perturbed"
"""What PBT appends to a trial's tag when an exploit changes its config,
as Ray does: `{original tag}@perturbed[{key=value,...}]`."""


def original_tag(tag: str) -> str:
    """The tag a trial was created with, from its tag now (a tag no exploit
    changed is returned as it is). A trial's directory is named once, at
    its creation, as Ray names it; this lets a resumed run find it again
    after PBT changed the tag."""
    return tag.split(PERTURBED + "[", 1)[0]


_WRAPPERS = ("with_parameters(", "with_resources(")

_LOCALS = "<locals>."
"""What a qualified name holds between a function and one defined in it."""


def numbered(base: str, number: int) -> str:
    """The name a process gives the `number`th object (from 2) it registers
    under the name `base` (`shell.trainable.registry.trainable_name`)."""
    return f"{base}_{number}"


def names_the_same(recorded: str, base: str) -> bool:
    """Whether `recorded` is `base`, or `base` `numbered` because another
    object of that name was registered first in that process."""
    if recorded == base:
        return True
    head, _, number = recorded.rpartition("_")
    return head == base and number.isdigit() and int(number) >= 2


def display_name(trainable_name: str) -> str:
    """A trainable's name as users know it: the object an import path
    (`pkg.module:train`) points at, or the registered name as it is; a
    function or class given to `with_parameters` or `with_resources` is
    named by what it wraps (`with_parameters(train)` is `train`, and so is
    `with_parameters(train)_2`, the name of a second such wrapper in one
    process), as Ray names it. A function defined in another function is
    recorded by its qualified name (`main.<locals>.train`) and named by its
    own (`train`), a lambda `lambda`, as Ray names them (`__name__`)."""
    name = trainable_name
    while name.startswith(_WRAPPERS):
        head = name.rpartition(")_")[0] + ")"
        if names_the_same(name, head):
            name = head
        if not name.endswith(")"):
            break
        name = name[name.index("(") + 1 : -1]
    name = name.rpartition(":")[2] or name
    name = name.rpartition(_LOCALS)[2]
    return "lambda" if names_the_same(name, "<lambda>") else name


def date_string(at: float) -> str:
    """An event timestamp as `YYYY-MM-DD_HH-MM-SS` in UTC (never local time:
    the same event must format the same on every machine)."""
    moment = datetime.datetime.fromtimestamp(at, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d_%H-%M-%S")


def error_entry(failure_number: int, at: float, error: str) -> str:
    """One entry of error.txt: a header with the failure count and time,
    then the error text."""
    return f"Failure # {failure_number} (occurred at {date_string(at)})\n{error}\n"
