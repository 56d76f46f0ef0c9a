"""`tunecore.schedulers.pb2_utils`, where `from ray.tune.schedulers.pb2_utils
import ...` lands: users' PB2 variants fit scikit-learn's regressor with
these helpers, so they must be the functions Ray's are (same signatures,
same numbers), and the kernel a scikit-learn kernel whose gradient is right."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.gaussian_process import GaussianProcessRegressor

from tunecore.schedulers import pb2_utils
from tunecore.schedulers.pb2_utils import (
    UCB,
    Array,
    TV_SquaredExp,
    normalize,
    optimize_acq,
    select_length,
    standardize,
)


def _rows(seed: int, count: int, columns: int = 4) -> tuple[Array, Array]:
    """PB2's data: (time, reward, hyperparameters...) rows and reward changes."""
    rng = np.random.default_rng(seed)
    inputs = rng.uniform(0, 1, (count, columns))
    inputs[:, 0] = np.repeat(np.arange(count // 2 + 1), 2)[:count]
    targets = np.sin(3 * inputs[:, 2]) + 0.1 * rng.normal(size=count)
    return inputs, targets


def _fitted(kernel: Any, inputs: Array, targets: Array) -> GaussianProcessRegressor:
    model = GaussianProcessRegressor(kernel=kernel, optimizer="fmin_l_bfgs_b")
    return model.fit(normalize(inputs, inputs), standardize(targets))


def test_normalize_scales_each_column_by_the_bounds_given() -> None:
    bounds = np.array([[0.0, 10.0], [1.0, 30.0]])
    data = np.array([[0.0, 10.0], [1.0, 30.0], [0.5, 20.0]])
    expected = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.5]])
    np.testing.assert_allclose(normalize(data, bounds), expected, atol=1e-7)


def test_standardize_centres_scales_and_clips_at_two() -> None:
    values = np.array([0.0] * 20 + [100.0])
    scaled = standardize(values)
    assert scaled.max() == 2.0  # the outlier, clipped
    unclipped = standardize(np.array([1.0, 2.0, 3.0]))
    assert abs(unclipped.mean()) < 1e-12
    np.testing.assert_allclose(unclipped.std(), 1.0, rtol=1e-6)


def test_the_kernel_decays_with_time_and_distance() -> None:
    kernel = TV_SquaredExp(variance=2.0, lengthscale=0.5, epsilon=0.2)
    same_place = np.array([[0.0, 0.3, 0.3], [4.0, 0.3, 0.3]])
    np.testing.assert_allclose(np.asarray(kernel(same_place))[0, 1], 2.0 * 0.8**2)
    apart = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    np.testing.assert_allclose(np.asarray(kernel(apart))[0, 1], 2.0 * np.exp(-1 / 0.5))
    np.testing.assert_allclose(kernel.diag(apart), [2.0, 2.0])


def test_the_kernels_gradient_is_the_derivative_by_its_log_parameters() -> None:
    points = np.random.default_rng(3).uniform(0, 3, (5, 3))
    kernel = TV_SquaredExp(variance=1.3, lengthscale=0.7, epsilon=0.15)
    _, gradient = kernel(points, eval_gradient=True)
    step = 1e-6
    for index in range(3):
        theta = kernel.theta.copy()
        theta[index] += step
        moved = clone(kernel)
        moved.theta = theta
        numeric = (moved(points) - kernel(points)) / step
        np.testing.assert_allclose(gradient[:, :, index], numeric, rtol=1e-4, atol=1e-6)


def test_the_kernel_is_a_scikit_learn_kernel_a_regressor_fits() -> None:
    inputs, targets = _rows(0, 30)
    model = _fitted(TV_SquaredExp(), inputs, targets)
    assert model.kernel_.get_params()["epsilon_bounds"] == (1e-5, 0.5)
    assert isinstance(model.kernel_, TV_SquaredExp)  # cloned and refitted
    assert np.isfinite(model.log_marginal_likelihood_value_)
    mean, std = model.predict(normalize(inputs, inputs)[:3], return_std=True)
    assert mean.shape == (3,)
    assert (std >= 0).all()


def test_ucb_is_the_mean_plus_kappa_times_the_second_models_variance() -> None:
    inputs, targets = _rows(1, 20)
    model = _fitted(TV_SquaredExp(), inputs, targets)
    fixed = np.array([0.5, 0.2])
    x = np.array([0.3, 0.9])
    point = np.concatenate((fixed, x))[np.newaxis, :]
    mean = model.predict(point)[0]
    _, std = model.predict(point, return_std=True)
    kappa = np.sqrt(0.2 + max(0, np.log(0.4 * 20)))
    assert UCB(model, model, x, fixed) == pytest.approx(mean + kappa * std[0] ** 2)
    assert UCB(model, model, x, fixed, kappa=0.0) == pytest.approx(mean)


def test_optimize_acq_finds_a_bound_no_random_point_beats() -> None:
    inputs, targets = _rows(2, 24)
    model = _fitted(TV_SquaredExp(), inputs, targets)
    fixed = np.array([1.0, 0.5])
    np.random.seed(0)
    best = optimize_acq(UCB, model, model, fixed, 2)
    assert best.shape == (2,)
    assert ((best >= 0) & (best <= 1)).all()
    others = np.random.default_rng(5).uniform(0, 1, (50, 2))
    best_value = UCB(model, model, best, fixed)
    assert all(UCB(model, model, other, fixed) <= best_value + 1e-9 for other in others)


def test_select_length_keeps_every_row_below_two_hundred() -> None:
    inputs, targets = _rows(4, 150)
    assert select_length(inputs, targets, {"a": [0, 1], "b": [0, 1]}, 2) == 150


@pytest.mark.slow
def test_select_length_picks_a_window_in_steps_of_ten_from_two_hundred() -> None:
    inputs, targets = _rows(6, 225)
    length = select_length(inputs, targets, {"a": [0, 1], "b": [0, 1]}, 2)
    assert length in (200, 210, 220)


def _rays(name: str) -> Callable[..., Any]:
    """Ray's own helper, from the installed Ray's file (which imports only
    numpy, SciPy and scikit-learn: loaded alone, without `ray.tune`'s
    package and its dependencies)."""
    ray = importlib.util.find_spec("ray")
    if ray is None or ray.origin is None:
        pytest.skip("Ray is not installed")
    path = Path(ray.origin).parent / "tune" / "schedulers" / "pb2_utils.py"
    if not path.exists():
        pytest.skip(f"this Ray has no {path}")
    spec = importlib.util.spec_from_file_location("rays_pb2_utils", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", ["normalize", "standardize"])
def test_the_scalings_give_rays_numbers(name: str) -> None:
    data = np.random.default_rng(7).normal(size=(12, 3))
    ours = getattr(pb2_utils, name)
    arguments = (data, data[:4]) if name == "normalize" else (data,)
    np.testing.assert_allclose(ours(*arguments), _rays(name)(*arguments))


def test_the_kernel_and_its_fit_give_rays_numbers() -> None:
    inputs, targets = _rows(8, 40)
    ray_kernel = _rays("TV_SquaredExp")(variance=1.0, lengthscale=1.0, epsilon=0.1)
    ours = _fitted(TV_SquaredExp(variance=1.0, lengthscale=1.0, epsilon=0.1), inputs, targets)
    theirs = _fitted(ray_kernel, inputs, targets)
    np.testing.assert_allclose(ours.kernel_.theta, theirs.kernel_.theta, rtol=1e-6)
    np.testing.assert_allclose(
        ours.log_marginal_likelihood_value_, theirs.log_marginal_likelihood_value_, rtol=1e-9
    )
    fixed = np.array([3.0, 0.4])
    x = np.array([0.2, 0.6])
    assert UCB(ours, ours, x, fixed) == pytest.approx(_rays("UCB")(theirs, theirs, x, fixed))
    np.random.seed(11)
    best = optimize_acq(UCB, ours, ours, fixed, 2)
    np.random.seed(11)
    rays_best = _rays("optimize_acq")(_rays("UCB"), theirs, theirs, fixed, 2)
    np.testing.assert_allclose(best, rays_best, atol=1e-6)


def test_the_module_is_where_a_rewritten_import_lands() -> None:
    module = importlib.import_module("tunecore.schedulers.pb2_utils")
    assert set(module.__all__) == {
        "UCB",
        "TV_SquaredExp",
        "normalize",
        "optimize_acq",
        "select_length",
        "standardize",
    }
