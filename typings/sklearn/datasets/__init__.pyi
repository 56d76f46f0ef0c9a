# Local stub: scikit-learn ships no types. Only what examples/asha_sklearn.py uses.
from typing import Literal

import numpy as np
from numpy.typing import NDArray

def load_digits(
    *, n_class: int = 10, return_X_y: Literal[True], as_frame: Literal[False] = False
) -> tuple[NDArray[np.float64], NDArray[np.int64]]: ...
