"""PB2's model: a time-varying Gaussian process on the change in reward,
and the upper confidence bound that picks the next hyperparameters.

This follows Ray Tune's `pb2_utils` (Parker-Holder et al. 2020, "Provably
Efficient Online Hyperparameter Optimization with Population-Based
Bandits"): inputs are rows `(time, reward before, hyperparameters...)`,
the time and reward scaled to [0, 1] by their range in the data and the
hyperparameters by their bounds; targets are the reward changes per unit
of time, standardized and clipped to [-2, 2]. The kernel is Ray's
`TV_SquaredExp`,

    k(a, b) = variance * exp(-|a[1:] - b[1:]|^2 / lengthscale)
              * (1 - epsilon) ** (|a[0] - b[0]| / 2),

so old data counts less (Bogunovic et al. 2016, TV-GP-UCB). The new point
keeps the donor's time and reward (they come with its weights) and varies
only the hyperparameters; its score is the posterior mean plus
`sqrt(0.2 + max(0, log(0.4 n)))` times the posterior variance of a second
process that also holds the points other trials took this round (with no
target: the variance does not need one), so a round spreads its choices.

Why our own few lines of numpy and not a GP library (Ray used GPy, then
scikit-learn): the choice is part of the experiment's logged decisions,
and a resume replays them, so it must be a function of the scheduler's
state alone. Here the hyperparameters of the kernel are chosen from a
fixed grid by marginal likelihood (the variance in closed form), and the
bound is maximised over candidates drawn from the scheduler's own seeded
generator, refined by a fixed pattern search: no optimizer with its own
tolerances, no unseeded restarts, no global numpy random state. And no
BLAS or LAPACK: OpenBLAS splits a factorization or a product across
threads, and its bits then depend on how many there are (LAPACK's
Cholesky and solve of a 200-row matrix differ with 1 and 2 threads), so
the factor is computed column by column and every product by
`numpy.einsum`'s own loops. Matrices are at most `WINDOW` rows.

Deviations from Ray: Ray fits the kernel's three hyperparameters with
L-BFGS-B (and the second process's again, on zero targets) and maximises
the bound with ten L-BFGS-B runs from unseeded random starts; Ray keeps
the newest 1000 rows and, past 200, picks the window by likelihood; here
the newest `WINDOW` rows are used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from tunecore.core.rng import Rng, random_float

Matrix = npt.NDArray[np.float64]

WINDOW = 200
"""The newest data rows the model fits (Ray's least window)."""

CANDIDATES = 64
"""Random points the bound is evaluated at, per hyperparameter."""

_LENGTHSCALES = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
_EPSILONS = (1e-5, 0.05, 0.15, 0.5)  # Ray's range, (0, 0.5]
_VARIANCE_RANGE = (1e-5, 1e5)  # Ray's bounds on the kernel's variance
_JITTERS = (1e-8, 1e-6, 1e-4, 1e-2)  # relative noise, raised until the Cholesky succeeds
_SCALE_GUARD = 1e-8  # Ray's: added to every range, so a constant column divides by it


def normalize(data: Matrix, low: Matrix, high: Matrix) -> Matrix:
    """`data` scaled to [0, 1] per column by `low` and `high`."""
    return (data - low) / (high - low + _SCALE_GUARD)


def standardize(values: Matrix) -> Matrix:
    """Zero mean, unit deviation, clipped to [-2, 2] (as Ray)."""
    scaled = (values - np.mean(values)) / (np.std(values) + _SCALE_GUARD)
    return np.asarray(np.clip(scaled, -2.0, 2.0), dtype=np.float64)


class Kernel:
    """Ray's `TV_SquaredExp` with the variance factored out: `correlation`
    is the kernel divided by `variance`."""

    def __init__(self, lengthscale: float, epsilon: float) -> None:
        self.lengthscale = lengthscale
        self.epsilon = epsilon

    def correlation(self, a: Matrix, b: Matrix) -> Matrix:
        return self.of_distances(*distances(a, b))

    def of_distances(self, times: Matrix, squared: Matrix) -> Matrix:
        """The correlation from `distances`, which the kernel does not change."""
        decay = np.exp(0.5 * times * math.log1p(-self.epsilon))
        result: Matrix = np.exp(-squared / self.lengthscale) * decay
        return result


def distances(a: Matrix, b: Matrix) -> tuple[Matrix, Matrix]:
    """Between every row of `a` and of `b`: the distance in time (column 0)
    and the squared distance in the other columns."""
    times = np.abs(a[:, :1] - b[:, :1].T)
    squared = np.sum((a[:, None, 1:] - b[None, :, 1:]) ** 2, axis=2)
    return times, squared


class Process:
    """A Gaussian process conditioned on `inputs`: `inverse` is the inverse
    of the Cholesky factor of the correlation matrix (with the smallest
    jitter from `jitter` on that factors it); `weights` solve the matrix
    against the targets (zeros when only the variance is wanted)."""

    def __init__(
        self,
        kernel: Kernel,
        variance: float,
        inputs: Matrix,
        targets: Matrix,
        jitter: float = _JITTERS[0],
    ) -> None:
        self.kernel = kernel
        self.variance = variance
        self.inputs = inputs
        factor, self.jitter = _factor(kernel.correlation(inputs, inputs), jitter)
        self.inverse = _solve_lower(factor, np.eye(len(inputs)))
        self.weights = _product("ji,j->i", self.inverse, _product("ij,j->i", self.inverse, targets))

    def mean(self, points: Matrix) -> Matrix:
        return _product("ij,j->i", self.kernel.correlation(points, self.inputs), self.weights)

    def variance_at(self, points: Matrix) -> Matrix:
        cross = _product("ij,jk->ik", self.inverse, self.kernel.correlation(self.inputs, points))
        result: Matrix = self.variance * np.clip(1.0 - np.sum(cross * cross, axis=0), 0.0, None)
        return result

    def with_points(self, points: Matrix) -> Process:
        """The same kernel, also conditioned on `points` (targets unknown)."""
        inputs = np.vstack((self.inputs, points))
        return Process(self.kernel, self.variance, inputs, np.zeros(len(inputs)), self.jitter)


class NotPositiveDefinite(ArithmeticError):
    """The matrix has no Cholesky factor (a larger jitter may give one)."""


def _product(subscripts: str, left: Matrix, right: Matrix) -> Matrix:
    """A matrix product by `numpy.einsum`'s own loops: BLAS (`@`, and
    LAPACK's `potrf` and `gesv`) may split a product across threads, and
    its bits then depend on how many there are; a replay on another
    machine must choose the same values."""
    result: Matrix = np.einsum(subscripts, left, right)
    return result


def _factor(correlation: Matrix, jitter: float) -> tuple[Matrix, float]:
    """The Cholesky factor of `correlation` with the smallest jitter of
    `_JITTERS` from `jitter` on that gives one, and that jitter."""
    for tried in _JITTERS:
        if tried < jitter:
            continue
        try:
            return _cholesky(correlation, tried), tried
        except NotPositiveDefinite:
            continue
    raise NotPositiveDefinite(f"no jitter up to {_JITTERS[-1]} factors the matrix")


def _cholesky(correlation: Matrix, jitter: float) -> Matrix:
    """The lower Cholesky factor of `correlation + jitter * I`, column by
    column (see `_product`); `NotPositiveDefinite` when a pivot is not a
    positive number."""
    size = len(correlation)
    matrix = correlation + jitter * np.eye(size)
    factor = np.zeros_like(matrix)
    for column in range(size):
        done = factor[column, :column]
        pivot = matrix[column, column] - float(np.sum(done * done))
        if not pivot > 0.0 or not math.isfinite(pivot):
            raise NotPositiveDefinite(f"pivot {column} is {pivot}")
        factor[column, column] = math.sqrt(pivot)
        below = matrix[column + 1 :, column] - _product(
            "ij,j->i", factor[column + 1 :, :column], done
        )
        factor[column + 1 :, column] = below / factor[column, column]
    return factor


def _solve_lower(factor: Matrix, right: Matrix) -> Matrix:
    """`factor^-1 right` for a lower triangular `factor`, by forward
    substitution (`right` a vector or a matrix of columns)."""
    columns = right.reshape(len(right), -1)
    solved = np.zeros_like(columns)
    for row in range(len(factor)):
        known = _product("j,jk->k", factor[row, :row], solved[:row])
        solved[row] = (columns[row] - known) / factor[row, row]
    return solved.reshape(right.shape)


def fit(inputs: Matrix, targets: Matrix) -> Process:
    """The process whose kernel maximises the marginal likelihood over the
    grid of lengthscales and epsilons, the variance at its closed-form
    optimum (clipped to Ray's bounds), the smallest jitter that factors.
    Ties go to the first in grid order."""
    best: tuple[float, Kernel, float, float] | None = None
    count = len(targets)
    between = distances(inputs, inputs)
    for lengthscale in _LENGTHSCALES:
        for epsilon in _EPSILONS:
            kernel = Kernel(lengthscale, epsilon)
            factor, jitter = _factor(kernel.of_distances(*between), _JITTERS[0])
            half = _solve_lower(factor, targets)
            quadratic = float(np.sum(half * half))
            variance = min(max(quadratic / count, _VARIANCE_RANGE[0]), _VARIANCE_RANGE[1])
            log_det = 2.0 * float(np.sum(np.log(np.diag(factor))))
            likelihood = -0.5 * (quadratic / variance + count * math.log(variance) + log_det)
            if best is None or likelihood > best[0]:
                best = (likelihood, kernel, variance, jitter)
    assert best is not None  # the grid is not empty
    _, kernel, variance, jitter = best
    return Process(kernel, variance, inputs, targets, jitter)


def choose(
    rows: Matrix,
    changes: Matrix,
    base: Sequence[float],
    taken: Matrix,
    rng: Rng,
) -> tuple[Rng, Matrix]:
    """The hyperparameters, each in [0, 1] of its bounds, with the highest
    bound, and the generator after the draws.

    `rows` are `(time, reward before, hyperparameters in [0, 1])`,
    `changes` the reward change per unit of time of each row, `base` the
    donor's (time, reward before) and `taken` the points (in [0, 1]) other
    trials took this round.
    """
    fixed_low = np.min(rows[:, :2], axis=0)
    fixed_high = np.max(rows[:, :2], axis=0)
    inputs = rows.copy()
    inputs[:, :2] = normalize(rows[:, :2], fixed_low, fixed_high)
    fixed = normalize(np.asarray(base, dtype=np.float64), fixed_low, fixed_high)
    model = fit(inputs, standardize(changes))
    spread = model if len(taken) == 0 else model.with_points(_at(fixed, taken))
    kappa = math.sqrt(0.2 + max(0.0, math.log(0.4 * len(changes))))

    def bound(points: Matrix) -> Matrix:
        located = _at(fixed, points)
        result: Matrix = model.mean(located) + kappa * spread.variance_at(located)
        return result

    dimensions = rows.shape[1] - 2
    draws = []
    for _ in range(CANDIDATES * dimensions):
        rng, draw = random_float(rng)
        draws.append(draw)
    candidates = np.array(draws, dtype=np.float64).reshape(-1, dimensions)
    scores = bound(candidates)
    best = int(np.argmax(scores))
    return rng, _refine(bound, candidates[best], float(scores[best]))


def _at(fixed: Matrix, points: Matrix) -> Matrix:
    """Test inputs: the fixed time and reward beside each point."""
    return np.hstack((np.tile(fixed, (len(points), 1)), points))


def _refine(
    bound: Callable[[Matrix], Matrix],
    start: Matrix,
    value: float,
    *,
    step: float = 0.1,
    smallest: float = 1e-3,
    moves_left: int = 200,
) -> Matrix:
    """A compass search from `start`: move to the best of the 2d points a
    step away along each axis (clipped to [0, 1]) while it is strictly
    better, else halve the step, until it is below `smallest` (or after
    `moves_left` evaluations: a bound is finite, but a cap costs nothing)."""
    point = start
    dimensions = len(start)
    while step >= smallest and moves_left > 0:
        moves_left -= 1
        moves = np.vstack((np.eye(dimensions), -np.eye(dimensions))) * step
        neighbours = np.clip(point + moves, 0.0, 1.0)
        scores = bound(neighbours)
        best = int(np.argmax(scores))
        if float(scores[best]) > value:
            point, value = neighbours[best], float(scores[best])
        else:
            step /= 2
    return point
