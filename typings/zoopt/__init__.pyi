# Local stub: zoopt ships no types. Only what tunecore.search.zoopt uses.
from typing import Any

class ValueType:
    GRID: int
    CONTINUOUS: int
    DISCRETE: int

class Dimension2:
    def __init__(self, dim_list: list[Any]) -> None: ...

class Solution:
    def __init__(self, x: Any = ..., value: float = ...) -> None: ...
    def get_x(self) -> list[Any]: ...

class Parameter:
    def __init__(self, budget: int = ..., init_samples: Any = ..., **kwargs: Any) -> None: ...
    def get_train_size(self) -> int: ...
