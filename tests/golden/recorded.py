"""What the golden-log writers share: the log copied in, and what replaying
it gives, as `tests/test_golden_log.py` checks it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import tunecore
from tunecore.shell.journal import digested
from tunecore.shell.replay import Replayed


def keep_log(directory: Path, target: Path) -> Replayed:
    """Copy the log of the experiment in `directory` (events and snapshots)
    into a new `target`, and replay it."""
    target.mkdir(parents=True)
    shutil.copy(directory / "events.log", target / "events.log")
    shutil.copytree(directory / "snapshots", target / "snapshots")
    return tunecore.replay(target)


def write_expected(replayed: Replayed, target: Path, **more: Any) -> None:
    """`target/expected.json`: the records, the commands the core decided
    (its requests left out), the trials' statuses and last iterations,
    and `more`."""
    trials = replayed.state.trials.values()
    expected = {
        "records": replayed.records,
        "commands": len(digested([command for _, command in replayed.commands])),
        "statuses": sorted(t.status.value for t in trials),
        "iterations": sorted(int(str(t.last_result["training_iteration"])) for t in trials),
        **more,
    }
    (target / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
