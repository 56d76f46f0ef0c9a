# Local stub: only what tunecore.search.hyperopt uses.
from typing import Any

from hyperopt import Domain, Trials

def suggest(
    new_ids: list[int],
    domain: Domain,
    trials: Trials,
    seed: int,
    prior_weight: float = ...,
    n_startup_jobs: int = ...,
    n_EI_candidates: int = ...,
    gamma: float = ...,
    verbose: bool = ...,
) -> list[dict[str, Any]]: ...
