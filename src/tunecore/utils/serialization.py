"""`ray.tune.utils.serialization`: Ray's JSON encoder and decoder for
documents that hold functions (a vendored `ExperimentAnalysis`, a script
writing its configs, `json.dumps(config, cls=TuneFunctionEncoder)`).

Ray's encoder embeds every value JSON cannot hold (a function first of all)
as a hex cloudpickle (`{"_type": "CLOUDPICKLE_FALLBACK", "value": ...}`),
and its decoder refuses to unpickle one unless `allow_cloudpickle=True`.
tunecore persists no pickles and loads none, so here:

- a function is written as a readable reference, `{"_type": "FUNCTION",
  "value": "module:qualname"}`, and any other object JSON cannot hold as
  `{"_type": "OBJECT", "class": "module:qualname", "value": repr(obj)}`;
  NumPy arrays and scalars become the lists and numbers they hold, as
  tunecore's result files write them;
- the decoder gives those placeholders back as the dicts they are (it
  imports nothing and runs no code), and refuses Ray's cloudpickle payloads
  with a `ValueError` saying why, even with `allow_cloudpickle=True`.

So an encoded document decodes to data, never to the function itself: a
function's reference says which code it was, for a person (or a script that
imports it deliberately) to use.
"""

from __future__ import annotations

import json
import types
from typing import Any

import numpy as np

__all__ = ["TuneFunctionDecoder", "TuneFunctionEncoder"]

CLOUDPICKLE_FALLBACK = "CLOUDPICKLE_FALLBACK"
"""The marker of Ray's embedded cloudpickle payloads."""
FUNCTION = "FUNCTION"
"""The marker of a function's reference (`module:qualname`)."""
OBJECT = "OBJECT"
"""The marker of another object JSON cannot hold: its class and `repr`."""


def _qualified(value: object) -> str:
    return f"{getattr(value, '__module__', None)}:{getattr(value, '__qualname__', value)}"


class TuneFunctionEncoder(json.JSONEncoder):
    """Writes any value: functions and other objects as the placeholders of
    the module doc, never as a pickle."""

    def default(self, o: Any) -> Any:
        if isinstance(o, types.FunctionType):
            return {"_type": FUNCTION, "value": _qualified(o)}
        if isinstance(o, np.ndarray | np.generic):
            return o.tolist()
        try:
            return super().default(o)
        except TypeError:
            return {"_type": OBJECT, "class": _qualified(type(o)), "value": repr(o)}


class TuneFunctionDecoder(json.JSONDecoder):
    """Reads what `TuneFunctionEncoder` (or Ray's) wrote: placeholders stay
    dicts; a cloudpickle payload of Ray's is a `ValueError`.
    `allow_cloudpickle` is Ray's opt-in to unpickling, accepted so Ray's
    callers run, and refused when a payload comes."""

    def __init__(self, *args: Any, allow_cloudpickle: bool = False, **kwargs: Any) -> None:
        self._allow_cloudpickle = allow_cloudpickle
        kwargs["object_hook"] = self.object_hook
        super().__init__(*args, **kwargs)

    def object_hook(self, obj: dict[str, Any]) -> Any:
        if obj.get("_type") == CLOUDPICKLE_FALLBACK:
            opted_in = " (allow_cloudpickle=True does not change that)"
            raise ValueError(
                f"Refusing to deserialize an embedded cloudpickle payload "
                f"({CLOUDPICKLE_FALLBACK!r}) from JSON: tunecore never unpickles, as loading a "
                f"pickle runs code{opted_in if self._allow_cloudpickle else ''}. Re-encode the "
                "document with tunecore.utils.serialization.TuneFunctionEncoder, which writes "
                "functions as their 'module:qualname' reference"
            )
        return obj
