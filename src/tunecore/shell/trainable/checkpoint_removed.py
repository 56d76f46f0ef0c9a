"""The methods Ray's `Checkpoint` lost in Ray 2.7 (`from_dict`, `to_dict`,
`from_uri`, `get_preprocessor`, ...), which scripts from before still call.

Ray 2.60's class answers each with an AttributeError that says what to do
instead (its metaclass's `__getattr__`); `Removed` does the same on
tunecore's `Checkpoint`, where the advice is tunecore's: a checkpoint is a
directory, and what goes in it is the user's files (no pickle needed).
Reading the attribute raises, so `hasattr(Checkpoint, "from_dict")` is
False, as in Ray.
"""

from __future__ import annotations

from typing import NoReturn

_DIRECTORY = (
    "A checkpoint is a directory. To store a dictionary, write it into a directory and report "
    "that:\n\n"
    "import json, os, tempfile\n"
    "import tunecore\n"
    "from tunecore import Checkpoint\n\n"
    "with tempfile.TemporaryDirectory() as checkpoint_dir:\n"
    "    with open(os.path.join(checkpoint_dir, 'data.json'), 'w') as fp:\n"
    "        json.dump({'data': 'value'}, fp)\n"
    "    tunecore.report(metrics, checkpoint=Checkpoint.from_directory(checkpoint_dir))\n\n"
    "To load it back:\n\n"
    "checkpoint = tunecore.get_checkpoint()\n"
    "if checkpoint:\n"
    "    with checkpoint.as_directory() as checkpoint_dir:\n"
    "        with open(os.path.join(checkpoint_dir, 'data.json')) as fp:\n"
    "            data = json.load(fp)"
)
_URI = (
    "To use a checkpoint in remote storage, build it with the constructor, "
    "`Checkpoint(path='s3://bucket/dir')`, and read it with `checkpoint.as_directory()` / "
    "`checkpoint.to_directory()`; upload with `pyarrow.fs` or your storage's client."
)
_PREPROCESSOR = (
    "A preprocessor belongs to Ray Train's trainers; keep what your model needs with the "
    "checkpoint as its metadata: `checkpoint.set_metadata({...})`, read back with "
    "`checkpoint.get_metadata()`."
)
ADVICE = {
    **dict.fromkeys(
        ("from_dict", "to_dict", "from_bytes", "to_bytes", "get_internal_representation"),
        _DIRECTORY,
    ),
    **dict.fromkeys(("from_uri", "to_uri", "uri"), _URI),
    **dict.fromkeys(("get_preprocessor", "set_preprocessor"), _PREPROCESSOR),
}
"""Each removed name, and what to do instead."""


class Removed:
    """A class attribute that is gone: reading it, on the class or on an
    instance, raises an AttributeError naming what to use instead."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name
        self._owner = owner.__name__

    def __get__(self, instance: object, owner: type | None = None) -> NoReturn:
        raise AttributeError(
            f"The `{self._owner}` class does not support `{self._name}()` (Ray removed it in "
            f"Ray 2.7; Ray 2.60's `ray.train.Checkpoint` refuses it too). {ADVICE[self._name]}"
        )
