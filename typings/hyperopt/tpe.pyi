# Local stub: only what tunecore.search.hyperopt uses.
from typing import Any

from hyperopt import Domain, Trials

def suggest(
    new_ids: list[int],
    domain: Domain,
    trials: Trials,
    seed: int,
    n_startup_jobs: int = ...,
    gamma: float = ...,
    verbose: bool = ...,
) -> list[dict[str, Any]]: ...
