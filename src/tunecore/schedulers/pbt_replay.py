"""Ray Tune's `PopulationBasedTrainingReplay(policy_file)`: reads a PBT
policy file (`log_config=True` writes them) and builds the replaying
scheduler (`tunecore.core.schedulers.pbt_replay`) from it."""

from __future__ import annotations

from pathlib import Path

from tunecore.core.schedulers import pbt_replay
from tunecore.model import InvalidFieldError


def PopulationBasedTrainingReplay(
    policy_file: str,
) -> pbt_replay.PopulationBasedTrainingReplay:
    """The scheduler that trains one trial along the schedule in
    `policy_file` (`~` expanded), as Ray's; a missing or unreadable file is
    an error naming it."""
    path = Path(policy_file).expanduser()
    if not path.is_file():
        raise InvalidFieldError(
            "PopulationBasedTrainingReplay.policy_file",
            policy_file,
            "the path of a PBT policy file (pbt_policy_<trial_id>.txt)",
        )
    first, changes = pbt_replay.policy_changes(path.read_text(encoding="utf-8"), str(path))
    return pbt_replay.PopulationBasedTrainingReplay(
        policy_file=path.as_posix(),
        config=first,
        changes=changes,
        experiment_tag=f"replay_{path.name}",
    )
