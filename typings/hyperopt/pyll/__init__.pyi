# Local stub: only what tunecore.search.hyperopt uses. A node of a pyll graph.
from typing import Any

class Apply:
    name: str
    pos_args: list[Any]
    named_args: list[Any]
    o_len: int | None
    pure: bool
    define_params: Any
    def __init__(
        self,
        name: str,
        pos_args: list[Any],
        named_args: list[Any],
        o_len: int | None = None,
        pure: bool = False,
        define_params: Any = None,
    ) -> None: ...

class Literal(Apply):
    def __init__(self, obj: Any = None) -> None: ...
    @property
    def obj(self) -> Any: ...

scope: Any  # pyll's table of functions (`scope.define` registers one)

def as_apply(obj: Any) -> Apply: ...
def dfs(aa: Apply, seq: Any = None, seqset: Any = None) -> list[Apply]: ...
