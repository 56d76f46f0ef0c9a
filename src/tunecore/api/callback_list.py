"""`ray.tune.callback.CallbackList`: several callbacks passed as one, with
Ray's container API (`len`, indexing, the states of all of them, saving
those states to a directory and back).

It is the `CallbackList` tunecore's loop calls its callbacks through, so it
shares its one difference from Ray's: a callback that raises is logged and
skipped, never the end of the experiment. Its states are saved as JSON
(`callback-states-<session>.json`), where Ray pickles them
(`callback-states-<session>.pkl`): tunecore writes and reads no pickles. A
state JSON cannot hold is a `TypeError` naming the callback.
"""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path
from typing import Any, ClassVar

from tunecore.shell import callbacks
from tunecore.shell.storage.own_files import read_text, write_atomic


class CallbackList(callbacks.CallbackList):
    """Call several callbacks as one (see the module doc)."""

    IS_CALLBACK_CONTAINER: ClassVar[bool] = True
    CKPT_FILE_TMPL: ClassVar[str] = "callback-states-{}.json"

    def __len__(self) -> int:
        return len(self.callbacks)

    def __getitem__(self, i: int) -> callbacks.Callback:
        return self.callbacks[i]

    def get_state(self) -> dict[str, object] | None:
        """Each callback's state by its position (`"0"`, `"1"`, ...: JSON's
        keys, where Ray's are the numbers); None when none has a state, so
        nothing is saved, as in Ray."""
        states: dict[str, object] = {
            str(i): callback.get_state() for i, callback in enumerate(self.callbacks)
        }
        return states if any(states.values()) else None

    def set_state(self, state: dict[Any, Any]) -> None:
        """Give each callback its state from `get_state` (keyed by position,
        as a string or, as Ray's are, a number); one without a state is
        left as it is."""
        for i, callback in enumerate(self.callbacks):
            own = state.get(str(i), state.get(i))
            if own:
                callback.set_state(own)

    def save_to_dir(
        self, checkpoint_dir: str | os.PathLike[str], session_str: str = "default"
    ) -> None:
        """Write the callbacks' states to `checkpoint_dir` (atomically, never
        through a link), if any has one."""
        state = self.get_state()
        if not state:
            return
        try:
            text = json.dumps(state)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"CallbackList.save_to_dir: a callback's get_state() is not JSON ({error}); "
                "tunecore saves callback states as JSON, never as a pickle"
            ) from error
        write_atomic(Path(checkpoint_dir, self.CKPT_FILE_TMPL.format(session_str)), text)

    def restore_from_dir(self, checkpoint_dir: str | os.PathLike[str]) -> None:
        """Take back the states the newest file `save_to_dir` wrote there
        holds; a `RuntimeError` if there is none (check `can_restore`)."""
        saved = self._saved_in(checkpoint_dir)
        if not saved:
            raise RuntimeError(f"Unable to find checkpoint in {os.fspath(checkpoint_dir)}.")
        state = json.loads(read_text(Path(max(saved))))
        if not isinstance(state, dict):
            raise ValueError(f"{max(saved)} holds {type(state).__name__}, not the states' object")
        self.set_state(state)

    def can_restore(self, checkpoint_dir: str | os.PathLike[str]) -> bool:
        """Whether `save_to_dir` wrote states into `checkpoint_dir`."""
        return bool(self._saved_in(checkpoint_dir))

    def _saved_in(self, checkpoint_dir: str | os.PathLike[str]) -> list[str]:
        pattern = self.CKPT_FILE_TMPL.format("*")
        return glob.glob(os.path.join(glob.escape(os.fspath(checkpoint_dir)), pattern))
