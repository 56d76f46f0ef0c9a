"""The state of stateful callbacks (Ray's `Callback.get_state` /
`set_state`), kept with the experiment so `Tuner.restore` hands it back.

A callback that counts or accumulates across trials overrides
`get_state()` to return a dict and `set_state(state)` to take it back. As
`fit()` ends (normally, on an error or on Ctrl-C) each callback's state is
written to `callback_states.json` in the experiment directory, as JSON,
never a pickle: a state JSON cannot hold is skipped with a warning naming
the callback. `Tuner.restore(path, callbacks=[...])` gives each callback
passed again the state of the callback of the same class at the same
position. Ray also saves these states periodically during the run; here
a run killed outright (no `finally`) keeps the states of its previous end.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

from tunecore.shell.callbacks import Callback
from tunecore.shell.storage.own_files import NotRegularFileError, read_text, write_atomic

logger = logging.getLogger(__name__)

STATES_FILE = "callback_states.json"


def _kind(callback: object) -> str:
    kind = type(callback)
    return f"{kind.__module__}:{kind.__qualname__}"


def save_states(callbacks: Sequence[object], experiment_dir: Path) -> None:
    """Write the state of every callback that has one (see the module doc)."""
    states = []
    for position, callback in enumerate(callbacks):
        if not isinstance(callback, Callback):
            continue
        state = callback.get_state()
        if state is None:
            continue
        try:
            encoded = json.loads(json.dumps(state))
        except (TypeError, ValueError) as error:
            logger.warning(
                "The state of callback %s is not JSON (%s): it is not saved, so a restore "
                "starts that callback afresh",
                _kind(callback),
                error,
            )
            continue
        states.append({"position": position, "callback": _kind(callback), "state": encoded})
    path = experiment_dir / STATES_FILE
    if not states:
        path.unlink(missing_ok=True)
        return
    write_atomic(path, json.dumps(states), shared=True)  # never through a link


def restore_states(callbacks: Sequence[object], experiment_dir: Path) -> None:
    """Give each callback the state saved for its class at its position."""
    path = experiment_dir / STATES_FILE
    try:
        text = read_text(path)  # a regular file, never through a link
    except FileNotFoundError:
        return
    except NotRegularFileError as error:
        logger.warning("%s: %s; callbacks start afresh", path, error.strerror)
        return
    try:
        saved = json.loads(text)
        by_position = {(s["position"], s["callback"]): s["state"] for s in saved}
    except (ValueError, KeyError, TypeError) as error:
        logger.warning("%s is unreadable (%s): callbacks start afresh", path, error)
        return
    for position, callback in enumerate(callbacks):
        state = by_position.get((position, _kind(callback)))
        if state is not None and isinstance(callback, Callback):
            callback.set_state(state)
