# Local stub: only what tunecore.search.bohb uses (hpbandster 0.7.x).
from typing import Any

class BOHB:
    def __init__(
        self,
        configspace: Any,
        min_points_in_model: int | None = None,
        top_n_percent: int = 15,
        num_samples: int = 64,
        random_fraction: float = ...,
        bandwidth_factor: float = 3,
        min_bandwidth: float = 1e-3,
        **kwargs: Any,
    ) -> None: ...
    def get_config(self, budget: float | None) -> tuple[dict[str, Any], dict[str, Any]]: ...
    def new_result(self, job: Any, update_model: bool = True) -> None: ...
