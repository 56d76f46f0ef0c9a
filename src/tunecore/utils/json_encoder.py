"""`ray.tune.utils.util.SafeFallbackEncoder`, `is_nan` and `is_nan_or_inf`.

Scripts import the encoder from Ray to write their own results and configs
as JSON (`json.dumps(result, cls=SafeFallbackEncoder)`): NumPy values
become Python ones and whatever JSON cannot hold becomes its `str()`, so a
dump never fails. Its rules are Ray's, quirks included, since a script's
files are compared with what it wrote before: a NaN that reaches the
encoder as an object (a NumPy float32, not a Python float, which `json`
writes itself as `NaN`) is written as `nan_str`, by default the string
"null".
"""

from __future__ import annotations

import json
import numbers
from typing import Any

import numpy as np

__all__ = ["SafeFallbackEncoder", "is_nan", "is_nan_or_inf"]


class SafeFallbackEncoder(json.JSONEncoder):
    """A `json.JSONEncoder` that writes any value (see the module doc)."""

    def __init__(self, nan_str: str = "null", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.nan_str = nan_str

    def default(self, o: Any) -> Any:
        try:
            if isinstance(o, np.ndarray):
                return o.tolist()
            if isinstance(o, np.bool_):
                return bool(o)
            if np.isnan(o):
                return self.nan_str
            if isinstance(o, numbers.Integral):
                return int(o)
            if isinstance(o, numbers.Number):
                return float(o)  # type: ignore[arg-type]
            return super().default(o)
        except Exception:  # Ray's encoder never fails: it falls back to text
            return str(o)


def is_nan(value: Any) -> bool:
    """Whether `value` is NaN (NumPy's test: a non-number raises TypeError)."""
    return bool(np.isnan(value))


def is_nan_or_inf(value: Any) -> bool:
    """Whether `value` is NaN or infinite."""
    return is_nan(value) or bool(np.isinf(value))
