# Local stub: scikit-learn ships no types. Only what examples/asha_sklearn.py uses.
from typing import Literal, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

class SGDClassifier:
    coef_: NDArray[np.float64]
    intercept_: NDArray[np.float64]
    classes_: NDArray[np.int64]
    t_: float
    n_features_in_: int
    def __init__(
        self,
        loss: Literal["hinge", "log_loss", "modified_huber", "squared_hinge", "perceptron"] = ...,
        *,
        alpha: float = ...,
        learning_rate: Literal["constant", "optimal", "invscaling", "adaptive"] = ...,
        eta0: float = ...,
        shuffle: bool = ...,
        random_state: int | None = ...,
    ) -> None: ...
    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self: ...
    def predict(self, X: ArrayLike) -> NDArray[np.int64]: ...
    def score(self, X: ArrayLike, y: ArrayLike) -> float: ...
