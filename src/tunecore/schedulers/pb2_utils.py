"""`ray.tune.schedulers.pb2_utils`: the model pieces Ray's PB2 is built from,
for scripts that build a PB2 variant of their own.

Users' PB2 variants in public repositories (time-varying processes with
transfer between runs, log-scaled bounds, plots of the model) import these
helpers from Ray's module and fit scikit-learn's `GaussianProcessRegressor`
with them; with the imports rewritten they come here. tunecore's own PB2
does not use them: its model (`tunecore.core.schedulers.pb2_model`) is a
deterministic one that a resume can replay. These keep Ray's signatures and
give Ray's numbers for the same inputs, on scikit-learn and SciPy as Ray's
do (`pip install scikit-learn`).

- `TV_SquaredExp`: the time-varying squared-exponential kernel of TV-GP-UCB
  (Bogunovic et al. 2016) as a scikit-learn kernel: time in the first
  column, `variance * exp(-|a - b|^2 / lengthscale) * (1 - epsilon) **
  (|t_a - t_b| / 2)` on the rest, fitted by its log-parameters in the order
  variance, lengthscale, epsilon.
- `normalize`, `standardize`: the input and target scalings.
- `UCB`, `optimize_acq`: the upper confidence bound at the hyperparameters
  (`fixed` holds the time and reward the point keeps) and its maximisation.
- `select_length`: how many of the newest rows to fit, by marginal
  likelihood, once there are 200 or more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

try:
    from scipy.optimize import minimize
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import Hyperparameter, Kernel
    from sklearn.metrics.pairwise import euclidean_distances
except ImportError as error:  # pragma: no cover - scikit-learn is a dev dependency
    raise ImportError(
        "tunecore.schedulers.pb2_utils needs scikit-learn and SciPy: pip install scikit-learn"
    ) from error

Array = npt.NDArray[np.float64]

_EPSILON_RANGE = (1e-5, 0.5)
"""The time decay is clipped into this range wherever it is used."""

_MIN_LENGTH = 200
"""Below this many rows `select_length` keeps them all; above, it tries
windows from this size up in steps of `_LENGTH_STEP`."""

_LENGTH_STEP = 10

_RESTARTS = 10
"""L-BFGS-B runs from random starts in `optimize_acq`."""


class TV_SquaredExp(Kernel):
    """Time-varying squared exponential kernel (TV-GP-UCB): a squared
    exponential on every column but the first, times `(1 - epsilon)` to
    the power of half the distance in time (the first column), so that old
    observations count less."""

    def __init__(  # noqa: PLR0917 - Ray's signature, positional as in Ray
        self,
        variance: float = 1.0,
        lengthscale: float = 1.0,
        epsilon: float = 0.1,
        variance_bounds: tuple[float, float] = (1e-5, 1e5),
        lengthscale_bounds: tuple[float, float] = (1e-5, 1e5),
        epsilon_bounds: tuple[float, float] = (1e-5, 0.5),
    ) -> None:
        # scikit-learn's get_params/clone read each argument back from the
        # attribute of the same name.
        self.variance = variance
        self.lengthscale = lengthscale
        self.epsilon = epsilon
        self.variance_bounds = variance_bounds
        self.lengthscale_bounds = lengthscale_bounds
        self.epsilon_bounds = epsilon_bounds

    @property
    def hyperparameter_variance(self) -> Hyperparameter:
        return Hyperparameter("variance", "numeric", self.variance_bounds)

    @property
    def hyperparameter_lengthscale(self) -> Hyperparameter:
        return Hyperparameter("lengthscale", "numeric", self.lengthscale_bounds)

    @property
    def hyperparameter_epsilon(self) -> Hyperparameter:
        return Hyperparameter("epsilon", "numeric", self.epsilon_bounds)

    @property
    def theta(self) -> Array:
        """The log-parameters the regressor optimizes, in Ray's order
        (variance, lengthscale, epsilon), which the gradient follows."""
        return np.log([self.variance, self.lengthscale, self.epsilon])

    @theta.setter
    def theta(self, theta: Sequence[float]) -> None:
        self.variance, self.lengthscale, self.epsilon = (float(v) for v in np.exp(theta))

    @property
    def bounds(self) -> Array:
        return np.log([self.variance_bounds, self.lengthscale_bounds, self.epsilon_bounds])

    def __call__(
        self, X: Array, Y: Array | None = None, eval_gradient: bool = False
    ) -> Array | tuple[Array, Array]:
        left = np.atleast_2d(X)
        right = left if Y is None else np.atleast_2d(Y)
        epsilon = float(np.clip(self.epsilon, *_EPSILON_RANGE))
        half_times = 0.5 * np.abs(left[:, :1] - right[:, :1].T)
        squared = _squared_distances(left[:, 1:], right[:, 1:])
        kernel = self.variance * np.exp(-squared / self.lengthscale) * (1.0 - epsilon) ** half_times
        if not eval_gradient:
            return kernel
        # Derivatives by the log-parameters, in `theta`'s order.
        by_variance = kernel
        by_lengthscale = kernel * squared / self.lengthscale
        by_epsilon = -kernel * half_times * epsilon / (1.0 - epsilon)
        return kernel, np.dstack([by_variance, by_lengthscale, by_epsilon])

    def diag(self, X: Array) -> Array:
        return np.full(np.shape(X)[0], self.variance, dtype=np.float64)

    def is_stationary(self) -> bool:
        return False


def _squared_distances(left: Array, right: Array) -> Array:
    """Squared Euclidean distances between the rows of two matrices, as
    scikit-learn computes them (its rounding, so that a fit ends where
    Ray's does: the likelihood is flat enough in the lengthscale for the
    last bits to move L-BFGS-B's end point)."""
    return np.asarray(np.square(euclidean_distances(left, right)), dtype=np.float64)


def normalize(data: Array, wrt: Array) -> Array:
    """`data` scaled column by column to [0, 1] by the least and greatest
    value of each column of `wrt` (rows of bounds, or the data itself)."""
    low = np.min(wrt, axis=0)
    high = np.max(wrt, axis=0)
    return np.asarray((data - low) / (high - low + 1e-8), dtype=np.float64)


def standardize(data: Array) -> Array:
    """`data` centred and scaled to unit deviation column by column, then
    clipped to [-2, 2] (an outlier must not dominate the fit)."""
    scaled = (data - np.mean(data, axis=0)) / (np.std(data, axis=0) + 1e-8)
    return np.asarray(np.clip(scaled, -2, 2), dtype=np.float64)


def UCB(
    m: GaussianProcessRegressor,
    m1: GaussianProcessRegressor,
    x: Sequence[float] | Array,
    fixed: Array,
    kappa: float | None = None,
) -> float:
    """The upper confidence bound at hyperparameters `x` beside the `fixed`
    columns (time and reward): `m`'s mean plus `kappa` times the variance of
    `m1`, which also holds the points other trials took this round (so a
    round spreads its choices). `kappa` defaults to `sqrt(0.2 + max(0,
    log(0.4 n)))` for `n` rows fitted. A model that cannot predict (a
    ValueError) gives a mean of -9999 or a variance of 0, as Ray's does."""
    if kappa is None:
        rows = m.X_train_.shape[0]
        kappa = float(np.sqrt(0.2 + max(0.0, np.log(0.4 * rows))))
    point = np.concatenate((np.ravel(fixed), np.ravel(np.asarray(x, dtype=np.float64))))[
        np.newaxis, :
    ]
    try:
        mean = m.predict(point)[0]
    except ValueError:
        mean = -9999
    try:
        _, std = m1.predict(point, return_std=True)
        variance = std[0] ** 2
    except ValueError:
        variance = 0
    return mean + kappa * variance  # type: ignore[no-any-return]


def optimize_acq(
    func: Callable[..., Any],
    m: GaussianProcessRegressor,
    m1: GaussianProcessRegressor,
    fixed: Array,
    num_f: int,
) -> Array:
    """The hyperparameters in [0, 1] that maximise `func(m, m1, x, fixed)`
    (`UCB`): the best of ten L-BFGS-B runs from starts drawn from numpy's
    global random state (seed it for a repeatable choice). `num_f` is the
    number of fixed columns."""
    free = m.X_train_.shape[1] - num_f
    best_value = -999.0
    best = m1.X_train_[0, :]
    for _ in range(_RESTARTS):
        start = np.random.uniform(0, 1, free)
        found = minimize(
            lambda x: -func(m, m1, x, fixed),
            start,
            bounds=[(0, 1)] * free,
            method="L-BFGS-B",
            options={"maxiter": 200, "maxfun": 200, "disp": False},
        )
        value = func(m, m1, found.x, fixed)
        if value > best_value:
            best_value, best = value, found.x
    return np.asarray(np.clip(best, 0, 1), dtype=np.float64)


def select_length(
    Xraw: Array,
    yraw: Array,
    bounds: Mapping[str, Sequence[float]],
    num_f: int,
) -> int:
    """How many of the newest rows to fit: all of them below 200; from
    200 up, the window (200, 210, ...) whose fitted process has the
    greatest log marginal likelihood. The fixed columns are scaled by
    their range in the window, the hyperparameters by `bounds` (each
    `[low, high]`)."""
    rows = Xraw.shape[0]
    if rows < _MIN_LENGTH:
        return int(rows)
    hyperparameter_limits = np.array(list(bounds.values()), dtype=np.float64).T
    scores = []
    for length in range(_MIN_LENGTH, rows + 1, _LENGTH_STEP):
        window = Xraw[-length:, :]
        targets = yraw[-length:]
        fixed = window[:, :num_f]
        fixed_limits = np.stack((np.max(fixed, axis=0), np.min(fixed, axis=0)))
        limits = np.concatenate((fixed_limits, hyperparameter_limits), axis=1)
        model = GaussianProcessRegressor(
            kernel=TV_SquaredExp(variance=1.0, lengthscale=1.0, epsilon=0.1),
            optimizer="fmin_l_bfgs_b",
        )
        model.fit(normalize(window, limits), standardize(targets).reshape(targets.size, 1))
        scores.append(model.log_marginal_likelihood_value_)
    return _MIN_LENGTH + _LENGTH_STEP * int(np.argmax(scores))


__all__ = ["UCB", "TV_SquaredExp", "normalize", "optimize_acq", "select_length", "standardize"]
