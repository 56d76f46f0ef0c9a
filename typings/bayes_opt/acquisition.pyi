# Local stub: only what tunecore.search.bayesopt uses (bayes_opt 3.x).
class AcquisitionFunction: ...

class UpperConfidenceBound(AcquisitionFunction):
    def __init__(
        self,
        kappa: float = 2.576,
        exploration_decay: float | None = None,
        exploration_decay_delay: int | None = None,
    ) -> None: ...

class ExpectedImprovement(AcquisitionFunction):
    def __init__(self, xi: float) -> None: ...

class ProbabilityOfImprovement(AcquisitionFunction):
    def __init__(self, xi: float) -> None: ...
