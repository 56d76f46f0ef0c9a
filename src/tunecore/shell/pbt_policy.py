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
import shutil
from pathlib import Path

from tunecore.model import RecordExploit

GLOBAL_FILE = "pbt_global.txt"


def policy_file(experiment_dir: Path, trial_id: str) -> Path:
    """Where a trial's schedule is written."""
    return experiment_dir / f"pbt_policy_{trial_id}.txt"


def record_exploit(experiment_dir: Path, command: RecordExploit) -> None:
    """Append the exploit's line to the global file and to the trial's
    policy file, which first becomes a copy of the donor's (Ray's order)."""
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
    with (experiment_dir / GLOBAL_FILE).open("a", encoding="utf-8") as out:
        out.write(line + "\n")
    donor = policy_file(experiment_dir, command.donor_id)
    trial = policy_file(experiment_dir, command.trial_id)
    if donor.exists():
        shutil.copyfile(donor, trial)
    with trial.open("a", encoding="utf-8") as out:
        out.write(line + "\n")
