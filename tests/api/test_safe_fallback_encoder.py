"""`ray.tune.utils.util.SafeFallbackEncoder`, `is_nan`, `is_nan_or_inf` under
the rewriting: the same JSON as Ray's encoder for the values scripts dump."""

from __future__ import annotations

import decimal
import json

import numpy as np
import pytest
from ray.air._internal.json import SafeFallbackEncoder as RaysEncoder

from tunecore.utils.util import SafeFallbackEncoder, is_nan, is_nan_or_inf


class Model:
    def __str__(self) -> str:
        return "Model(depth=3)"


VALUES = [
    np.float32("nan"),
    np.float64("nan"),
    float("inf"),
    np.int64(3),
    np.float32(1.5),
    np.bool_(True),
    np.array([[1, 2], [3, 4]]),
    decimal.Decimal("1.25"),
    complex(1, 2),
    Model(),
    {1, 2},
    {"metrics": {"loss": np.float32(0.25), "steps": np.int32(7)}, "model": Model()},
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_dumps_what_rays_encoder_dumps(value: object) -> None:
    assert json.dumps(value, cls=SafeFallbackEncoder) == json.dumps(value, cls=RaysEncoder)


def test_nan_str_is_what_a_nan_object_becomes() -> None:
    assert json.dumps([np.float32("nan")], cls=SafeFallbackEncoder, nan_str="NaN") == '["NaN"]'


def test_nan_and_inf_tests() -> None:
    assert is_nan(float("nan"))
    assert is_nan(np.float32("nan"))
    assert not is_nan(1.0)
    assert is_nan_or_inf(float("-inf"))
    assert is_nan_or_inf(float("nan"))
    assert not is_nan_or_inf(0)
    with pytest.raises(TypeError):
        is_nan("loss")
