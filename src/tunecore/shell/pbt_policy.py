"""PBT's policy files (`log_config=True`), written as Ray Tune writes them.

Each exploit appends one JSON line, `[trial_tag, donor_tag,
trial_iteration, donor_iteration, donor_config, config]`, to the
experiment's `pbt_global.txt`, and gives the trial the donor's
`pbt_policy_<donor_id>.txt` with the line appended as its own
`pbt_policy_<trial_id>.txt`: the schedule of configs that led to the
trial's state, which `PopulationBasedTrainingReplay` replays. The event log
holds every exploit already; these files are for Ray users' tools.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from tunecore.model import RecordExploit
from tunecore.shell.storage.own_files import NotRegularFileError, open_text, read_text, write_atomic

logger = logging.getLogger(__name__)

GLOBAL_FILE = "pbt_global.txt"


def policy_file(experiment_dir: Path, trial_id: str) -> Path:
    """Where a trial's schedule is written."""
    return experiment_dir / f"pbt_policy_{trial_id}.txt"


def record_exploit(experiment_dir: Path, command: RecordExploit) -> None:
    """Append the exploit's line to the global file and to the trial's
    policy file, which first becomes a copy of the donor's (Ray's order).
    These are tunecore's own files (`shell.storage.own_files`): one that
    is a symbolic link or a special file is neither written nor copied,
    only named in a warning (the event log holds the exploit anyway)."""
    line = json.dumps(
        [
            command.trial_tag,
            command.donor_tag,
            command.trial_iteration,
            command.donor_iteration,
            command.donor_config,
            command.config,
        ]
    )
    global_file = experiment_dir / GLOBAL_FILE
    try:
        with open_text(global_file, "a") as out:
            out.write(line + "\n")
    except NotRegularFileError as error:
        _skipped(global_file, error)
    donor = policy_file(experiment_dir, command.donor_id)
    trial = policy_file(experiment_dir, command.trial_id)
    try:
        schedule = read_text(donor)
    except FileNotFoundError:
        schedule = ""
    except NotRegularFileError as error:
        _skipped(donor, error)
        schedule = ""
    try:
        write_atomic(trial, schedule + line + "\n", shared=True)
    except NotRegularFileError as error:
        _skipped(trial, error)


def _skipped(path: Path, error: NotRegularFileError) -> None:
    logger.warning("%s: %s; PBT's policy line is not written there", path, error.strerror)
