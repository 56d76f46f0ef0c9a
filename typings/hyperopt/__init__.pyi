# Local stub: hyperopt ships no types. Only what tunecore.search.hyperopt uses.
from collections.abc import Callable
from typing import Any

from hyperopt import base as base
from hyperopt import hp as hp
from hyperopt import pyll as pyll
from hyperopt import tpe as tpe

class Domain:
    cmd: Any
    workdir: Any
    params: dict[str, Any]
    def __init__(self, fn: Callable[[Any], Any], expr: object) -> None: ...
    def new_result(self) -> dict[str, Any]: ...

class Trials:
    def __init__(self) -> None: ...
    @property
    def trials(self) -> list[dict[str, Any]]: ...
    def new_trial_ids(self, n: int) -> list[int]: ...
    def new_trial_docs(
        self,
        tids: list[int],
        specs: list[Any],
        results: list[dict[str, Any]],
        miscs: list[dict[str, Any]],
    ) -> list[dict[str, Any]]: ...
    def insert_trial_docs(self, docs: list[dict[str, Any]]) -> list[int]: ...
    def refresh(self) -> None: ...

def space_eval(space: object, hp_assignment: dict[str, Any]) -> object: ...
