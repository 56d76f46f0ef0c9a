# Local stub: only what tunecore.search.bayesopt uses (bayes_opt 3.x).
from collections.abc import Mapping
from typing import Any

from bayes_opt import acquisition as acquisition
from bayes_opt.acquisition import AcquisitionFunction

class BayesianOptimization:
    def __init__(
        self,
        f: None,
        pbounds: Mapping[str, tuple[float, float]],
        acquisition_function: AcquisitionFunction | None = None,
        constraint: None = None,
        random_state: int | None = None,
        verbose: int = 2,
        bounds_transformer: None = None,
        allow_duplicate_points: bool = False,
    ) -> None: ...
    def register(self, params: Mapping[str, float], target: float) -> None: ...
    def suggest(self) -> dict[str, Any]: ...
    @property
    def res(self) -> list[dict[str, Any]]: ...
