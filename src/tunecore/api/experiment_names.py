"""An experiment's name and directory when `fit()` starts: Ray's default
name, made unique however many drivers start at once
(`claim_default_name`, `stored_default_names` for a storage), and an
earlier experiment of the same name set aside whole, so that it stays
restorable (`set_aside_earlier_run`)."""

from __future__ import annotations

import datetime
import itertools
import warnings
from collections.abc import Iterator
from pathlib import Path

from tunecore.shell.eventlog import log_path
from tunecore.shell.lock import driver_lock
from tunecore.shell.storage.layout import experiment_dirname
from tunecore.shell.storage.store import Store


def stored_default_names(root: Store, trainable: str) -> Iterator[str]:
    """`claim_default_name` in a storage: the names free there, in turn,
    from the first. A store cannot claim one atomically, so the caller
    claims each with its lock and lease and takes the next when another
    driver got there first (two drivers starting in the same second, on
    this machine or two, picked one name and the second failed with
    `ExperimentLockedError`, though the user had named nothing)."""
    stem = f"{trainable}_{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}"
    for number in itertools.count(1):
        name = stem if number == 1 else f"{stem}_{number}"
        if not root.exists(experiment_dirname(name)):
            yield name


def claim_default_name(root: Path, trainable: str) -> str:
    """Ray's default experiment name, `<trainable>_<date>_<time>`, made
    unique (see `_claim_name`): two `fit()` calls in the same second, in one
    process or two, get `..._2`, `..._3` instead of colliding on one log."""
    return _claim_name(root, f"{trainable}_{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}")


def _claim_name(root: Path, stem: str) -> str:
    """`stem`, or `stem_2`, `stem_3`, ...: the first whose directory in
    `root` this call could create (atomically, so no two callers get one)."""
    root.mkdir(parents=True, exist_ok=True)
    for number in itertools.count(1):
        name = stem if number == 1 else f"{stem}_{number}"
        try:
            (root / experiment_dirname(name)).mkdir()
        except FileExistsError:
            continue
        return name
    raise AssertionError("unreachable: itertools.count never ends")


def set_aside_earlier_run(experiment_dir: Path) -> None:
    """Running a script again with the same `RunConfig(name=...)` starts a
    new experiment there, as in Ray Tune; unlike Ray Tune, the earlier one
    stays whole and restorable: it moves to a sibling directory named after
    when its log was last written, and a warning says where. One a live
    driver runs stays where it is (`ExperimentLockedError`)."""
    log = log_path(experiment_dir)
    if not log.exists():
        return
    with driver_lock(experiment_dir):
        written = datetime.datetime.fromtimestamp(log.stat().st_mtime)
        aside = experiment_dir.parent / _claim_name(
            experiment_dir.parent, f"{experiment_dir.name}_{written:%Y-%m-%d_%H-%M-%S}"
        )
        experiment_dir.rename(aside)  # onto the empty directory just claimed
    warnings.warn(
        f"{experiment_dir} held an earlier experiment; it is now in {aside} "
        f"(continue it with Tuner.restore({str(aside)!r}, ...)). This run starts afresh "
        "under the name you gave.",
        stacklevel=3,
    )
