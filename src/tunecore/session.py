"""`ray.air.session`: the older spelling of a function trainable's calls
(`session.report(...)`, `session.get_checkpoint()`,
`session.get_trial_name()`), which Ray kept as forwards to `ray.train` and
`ray.tune`. Each forwards to the same call of `tunecore` here, so a script
written with `from ray.air import session` runs with
`from tunecore import session`."""

from __future__ import annotations

from tunecore.shell.trainable import get_checkpoint, get_context, report
from tunecore.shell.trainable.placement_group import PlacementGroupFactory

__all__ = [
    "get_checkpoint",
    "get_experiment_name",
    "get_local_rank",
    "get_local_world_size",
    "get_log_dir",
    "get_node_rank",
    "get_trial_dir",
    "get_trial_id",
    "get_trial_name",
    "get_trial_resources",
    "get_world_rank",
    "get_world_size",
    "report",
]


def get_trial_name() -> str:
    """The running trial's name."""
    return get_context().get_trial_name()


def get_trial_id() -> str:
    """The running trial's id."""
    return get_context().get_trial_id()


def get_trial_dir() -> str:
    """The running trial's directory."""
    return get_context().get_trial_dir()


def get_log_dir() -> str:
    """The running trial's directory (Ray's name in `ray.air.session`)."""
    return get_context().get_trial_dir()


def get_trial_resources() -> PlacementGroupFactory:
    """The running trial's resources, as Ray's `PlacementGroupFactory` (what
    a `ResourceChangingScheduler` last gave it)."""
    return get_context().get_trial_resources()


def get_experiment_name() -> str:
    """The name of the experiment the running trial belongs to."""
    return get_context().get_experiment_name()


def get_world_rank() -> int:
    """0: a trial is one process, rank 0 of 1."""
    return get_context().get_world_rank()


def get_world_size() -> int:
    """1: a trial is one process."""
    return get_context().get_world_size()


def get_local_rank() -> int:
    """0: a trial is one process."""
    return get_context().get_local_rank()


def get_local_world_size() -> int:
    """1: a trial is one process."""
    return get_context().get_local_world_size()


def get_node_rank() -> int:
    """0: a trial is one process on one node."""
    return get_context().get_node_rank()
