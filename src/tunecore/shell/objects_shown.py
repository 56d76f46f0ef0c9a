"""What a view of a trial (`shell.trial_view.TrialWithObjects`, and the
`Result` of `api.results`) shows in place of the JSON the log holds: the
objects its last result held (`shell.reported_objects`) and the param
space's objects its config names (`shell.trainable.config_objects`).

Both views read a trial's last result and config the same way, so they
share these three functions: which objects a view carries at all (most
trials carry none, and get the plain view), and the two reads.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tunecore.model import JsonDict, TrialState
from tunecore.shell.reported_objects import ReportedObjects
from tunecore.shell.trainable.config_objects import ConfigObjects


class ObjectsShown(NamedTuple):
    """The objects one trial's view shows; at least one is not None."""

    objects: ReportedObjects | None
    config_objects: ConfigObjects | None


def objects_shown(
    state: TrialState, objects: ReportedObjects | None, config_objects: ConfigObjects | None
) -> ObjectsShown | None:
    """The objects a view of `state` shows: its last result's `objects`,
    and the param space's `config_objects` if its config names any of
    them; None when neither (the plain view)."""
    if config_objects is not None and not config_objects.named_in(state.spec.config):
        config_objects = None
    if objects is None and config_objects is None:
        return None
    return ObjectsShown(objects, config_objects)


def last_result_shown(state: TrialState, objects: ReportedObjects | None) -> JsonDict:
    """`state`'s last result with the objects it held in place of their JSON."""
    if objects is None:
        return state.last_result
    return objects.merged(state.last_result)


def config_shown(state: TrialState, config_objects: ConfigObjects | None) -> dict[str, Any]:
    """`state`'s config with the param space's objects in place of their
    placeholders (a new dict at each read when there are any)."""
    if config_objects is None:
        return state.spec.config
    return config_objects.resolve(state.spec.config)
