"""The objects each trial's last result held where JSON could not, kept in
the driver while it lives, so that user code reads them as Ray Tune gives
them: `result.metrics["args"].lr` for an `argparse.Namespace` reported as
`args`, a NumPy array as the array, a tuple as the tuple.

The log, the snapshots and the result files hold the JSON form only
(`shell.trainable.result_objects`), and so does the core: the loop takes
the objects off a result as it arrives (`split`) and keeps them here, by
trial, for the trial's latest result (`ObjectsByTrial`). What user code
reads of a trial (its `Trial` view, its `Result`) shows them in place of
their JSON form (`ReportedObjects.merged`). A restored experiment, or one
read from its directory, has only the JSON form: nothing tunecore stores
is a pickle.

Only results with such values have an entry: a run whose results are all
plain JSON keeps nothing here and pays one empty-dict check per result.
An entry stands for one result of the trial and shows its objects only
on that result, told by its `training_iteration` and the JSON form of
each value: whatever the core made of the trial since (a newer result, a
restored checkpoint's), a value is shown as an object only where the
recorded value is still that object's JSON form.
"""

from __future__ import annotations

from collections.abc import Mapping

from tunecore.core.results import TRAINING_ITERATION
from tunecore.model import JsonDict, JsonValue
from tunecore.shell.trainable.result_objects import ReportedResult


class ReportedObjects:
    """The objects of one result (see the module docstring)."""

    __slots__ = ("iteration", "values")

    def __init__(self, iteration: JsonValue, values: dict[str, tuple[JsonValue, object]]) -> None:
        self.iteration = iteration
        self.values = values
        """Each key's recorded JSON form and the object reported."""

    def merged(self, recorded: JsonDict) -> JsonDict:
        """`recorded` (the trial's last result as the core has it) with the
        objects in place of their JSON form, where it is this entry's
        result; else `recorded` itself."""
        if recorded.get(TRAINING_ITERATION) != self.iteration:
            return recorded
        shown: dict[str, object] = dict(recorded)
        for key, (plain, reported) in self.values.items():
            if key in recorded and _same(recorded[key], plain):
                shown[key] = reported
        return shown  # type: ignore[return-value] # JSON or the objects behind it

    def recorded(self, shown: Mapping[str, object]) -> Mapping[str, object]:
        """`shown` (a result as user code got it from `merged`) with this
        entry's objects back in their JSON form: what tunecore's own
        loggers write, so the files hold what they always held."""
        values = self.values.items()
        swapped = {key: plain for key, (plain, shown_as) in values if shown.get(key) is shown_as}
        return {**shown, **swapped} if swapped else shown


def _same(recorded: JsonValue, plain: JsonValue) -> bool:
    return recorded is plain or bool(recorded == plain)


def split(result: ReportedResult) -> tuple[JsonDict, ReportedObjects | None]:
    """A result as it arrived from a worker: its plain JSON form (a plain
    dict), which is all that is recorded, and the objects it carried."""
    plain = dict(result)
    values = {key: (plain[key], value) for key, value in result.objects.items() if key in plain}
    if not values:
        return plain, None
    return plain, ReportedObjects(plain.get(TRAINING_ITERATION), values)


class ObjectsByTrial(dict[str, ReportedObjects]):
    """The `ReportedObjects` of each trial's latest result that had any, by
    trial id. A dict, so the hot path (a run without any) tells it is empty
    without a call."""

    __slots__ = ()

    def record(self, trial_id: str, objects: ReportedObjects) -> None:
        """The trial's latest result carried `objects`."""
        self[trial_id] = objects

    def forget(self, trial_id: str) -> None:
        """The trial's latest result carried no objects: an earlier one's go."""
        self.pop(trial_id, None)

    def of(self, trial_id: str) -> ReportedObjects | None:
        return self.get(trial_id)
