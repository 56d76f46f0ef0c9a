# Local stub: only what tunecore.search.hyperopt uses. A node of a pyll graph.
from typing import Any

class Apply:
    name: str
    pos_args: list[Any]
    obj: Any
