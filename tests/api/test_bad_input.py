"""Wrong values given to the Python API fail at once with an error that
names the setting and the value, never an `AttributeError` from deep
inside or an empty `AssertionError`; and Ray's scheduler and searcher
names build what Ray's `tune.run` builds from them."""

from __future__ import annotations

import re
from collections.abc import Callable

import pydantic
import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import InvalidFieldError
from tunecore.schedulers import AsyncHyperBandScheduler, FIFOScheduler
from tunecore.search import BasicVariantGenerator
from tunecore.shell.callbacks import RAY_HOOKS


def train(config: dict[str, object]) -> None:
    tunecore.report({"loss": 1.0})


@pytest.mark.parametrize(
    ("call", "error", "expected"),
    [
        (lambda: Tuner(train, param_space=5), TypeError, "Tuner(param_space=5) is invalid"),  # type: ignore[arg-type]
        (lambda: Tuner(train, tune_config=5), TypeError, "Tuner(tune_config=5) is invalid"),  # type: ignore[arg-type]
        (
            lambda: Tuner(train, run_config={"name": "x"}),  # type: ignore[arg-type]
            TypeError,
            "Tuner(run_config={'name': 'x'}) is invalid: expected a tunecore.RunConfig",
        ),
        (lambda: TuneConfig(metric=""), pydantic.ValidationError, "metric='' names no result key"),
        (lambda: TuneConfig(scheduler="asha"), pydantic.ValidationError, "scheduler='asha' is not"),
        (
            lambda: TuneConfig(search_alg="optima"),
            pydantic.ValidationError,
            "search_alg='optima' is not",
        ),
        (
            lambda: tunecore.run(train, checkpoint_score_attr=5),  # type: ignore[arg-type]
            TypeError,
            "checkpoint_score_attr=5 is invalid",
        ),
        (lambda: tunecore.grid_search(5), InvalidFieldError, "grid_search(values)=5 is invalid"),  # type: ignore[call-overload]
        (
            lambda: tunecore.grid_search("abc"),  # a str is a Sequence: caught at run time
            InvalidFieldError,
            "grid_search(values)='abc' is invalid: expected a list of values",
        ),
        (lambda: tunecore.choice(3), InvalidFieldError, "choice(categories)=3 is invalid"),  # type: ignore[call-overload]
        (
            lambda: TuneConfig(mode="minimum"),  # type: ignore[arg-type]
            pydantic.ValidationError,
            "input_value='minimum'",
        ),
        (lambda: TuneConfig(num_samples=-3), pydantic.ValidationError, "input_value=-3"),
        (lambda: RunConfig(stop=5), pydantic.ValidationError, "stop=5 is invalid"),
        (
            lambda: RunConfig(callbacks=[3]),
            pydantic.ValidationError,
            "callbacks[0]=3 is not a callback: expected a tunecore.Callback",
        ),
        (
            lambda: RunConfig(callbacks=[tunecore.Callback(), "x"]),
            pydantic.ValidationError,
            "callbacks[1]='x' is not a callback",
        ),
        (lambda: tunecore.uniform(1, 0), InvalidFieldError, "Uniform.high=0 is invalid"),
    ],
)
def test_a_wrong_value_is_named_with_its_setting(
    call: Callable[[], object], error: type[Exception], expected: str
) -> None:
    with pytest.raises(error, match=re.escape(expected)):
        call()


@pytest.mark.parametrize(
    ("name", "kind"),
    [("async_hyperband", AsyncHyperBandScheduler), ("FIFO", FIFOScheduler)],
)
def test_a_scheduler_named_as_ray_names_it_is_built(name: str, kind: type) -> None:
    assert isinstance(TuneConfig(scheduler=name).scheduler, kind)


def test_a_searcher_named_as_ray_names_it_is_built() -> None:
    assert isinstance(TuneConfig(search_alg="variant_generator").search_alg, BasicVariantGenerator)


class DuckCallback:
    """Ray's CallbackList calls these hooks on every callback without
    checking its class, so Ray runs such an object as a callback."""

    def __getattr__(self, hook: str) -> Callable[..., None]:
        if hook not in RAY_HOOKS:
            raise AttributeError(hook)
        return lambda *args, **kwargs: None


class HalfCallback:
    def on_trial_result(self, *args: object, **kwargs: object) -> None: ...


def test_run_config_takes_a_duck_typed_callback_with_rays_hooks_as_ray_does() -> None:
    duck = DuckCallback()
    assert RunConfig(callbacks=[duck]).callbacks == [duck]
    with pytest.raises(
        pydantic.ValidationError, match=r"callbacks\[0\]=.* \(it has no setup, on_step_begin"
    ):
        RunConfig(callbacks=[HalfCallback()])


def test_run_config_takes_ray_trains_callbacks_as_ray_trains_run_config_does() -> None:
    train = pytest.importorskip("ray.train", exc_type=ImportError)  # needs ray[train]
    callback = train.UserCallback()
    assert RunConfig(callbacks=[callback]).callbacks == [callback]
