"""Ray's domain classes built by hand (`tunecore.search.sample`), as Ray
Tune's `ray.tune.search.sample` builds them: the same calls, the same
attributes, the same draws for the same `random_state`, and in a param
space, a searcher's space or PBT's mutations the domain each stands for."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

import tunecore as tune
from tunecore.api.config_objects import split_objects
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.core.search.domains import Choice, SampleFrom
from tunecore.core.search.variants import ParamSpace, parse_space, without_functions
from tunecore.model import InvalidFieldError
from tunecore.model.codec import from_msgpack, to_msgpack
from tunecore.search.sample import (
    BaseSampler,
    Categorical,
    Domain,
    Float,
    Function,
    Grid,
    Integer,
    LogUniform,
    Normal,
    Quantized,
    Uniform,
)

# Each hand-built domain, and the `tune.*` function Ray defines as that very call.
AS_RAY_DEFINES_THEM: list[tuple[Domain, object]] = [
    (Float(-5, -1).uniform(), tune.uniform(-5, -1)),
    (Float(0, 1).uniform().quantized(0.1), tune.quniform(0, 1, 0.1)),
    (Float(1e-4, 1e-1).loguniform(), tune.loguniform(1e-4, 1e-1)),
    (Float(1e-4, 1e-1).loguniform().quantized(1e-4), tune.qloguniform(1e-4, 1e-1, 1e-4)),
    (Float(None, None).normal(10, 2), tune.randn(10, 2)),
    (Float(None, None).normal(0, 1).quantized(0.5), tune.qrandn(0, 1, 0.5)),
    (Integer(1, 10).uniform(), tune.randint(1, 10)),
    (Integer(1, 10).uniform().quantized(3), tune.qrandint(1, 10, 3)),
    (Integer(1, 100).loguniform(), tune.lograndint(1, 100)),
    (Integer(2, 64).loguniform().quantized(2), tune.qlograndint(2, 64, 2)),
    (Categorical(["relu", "tanh"]).uniform(), tune.choice(["relu", "tanh"])),
    (Categorical([1, 2]).grid(), tune.grid_search([1, 2])),
]


@pytest.mark.parametrize(("built", "function"), AS_RAY_DEFINES_THEM)
def test_a_hand_built_domain_stands_for_the_domain_its_tune_function_returns(
    built: Domain, function: object
) -> None:
    assert built.to_domain() == function
    assert parse_space({"x": built}) == parse_space({"x": function})


def test_without_a_sampler_a_domain_draws_as_rays_default_does() -> None:
    assert Float(0, 1).to_domain() == tune.uniform(0, 1)
    assert Integer(0, 4).to_domain() == tune.randint(0, 4)
    assert Categorical("ab").to_domain() == tune.choice(["a", "b"])
    func = Function(lambda spec: spec.config.lr * 2)
    assert isinstance(func.to_domain(), SampleFrom)


def test_the_attributes_are_rays() -> None:
    lr = Float(1e-4, 1e-1).loguniform()
    assert (lr.lower, lr.upper) == (1e-4, 1e-1)
    assert isinstance(lr.sampler, LogUniform)
    assert isinstance(lr.get_sampler(), LogUniform)
    assert str(lr.sampler) == "LogUniform"
    assert lr.domain_str == "(0.0001, 0.1)"
    assert lr.cast(np.float64(0.5)) == 0.5
    assert type(lr.cast(1)) is float
    assert lr.is_valid(0.01)
    assert not lr.is_valid(1.0)
    assert not lr.is_grid()
    assert not lr.is_function()
    unbounded = Float(None, None)
    assert (unbounded.lower, unbounded.upper) == (-math.inf, math.inf)
    assert unbounded.sampler is None
    assert isinstance(unbounded.get_sampler(), Uniform)
    normal = unbounded.normal(3, 2)
    assert isinstance(normal.sampler, Normal)
    assert (normal.sampler.mean, normal.sampler.sd) == (3, 2)
    step = Integer(0, 20).uniform().quantized(5)
    assert isinstance(step.sampler, Quantized)
    assert step.sampler.q == 5
    assert isinstance(step.sampler.get_sampler(), Uniform)
    assert type(step.cast(2.0)) is int
    pick = Categorical(["a", "b", "c"])
    assert pick.categories == ["a", "b", "c"]
    assert len(pick) == 3
    assert pick[1] == "b"
    assert pick.grid().is_grid()
    assert isinstance(pick.grid().sampler, Grid)
    assert pick.is_valid("c")
    assert not pick.is_valid("d")
    func = Function(lambda: 1)
    assert func.is_function()
    assert isinstance(func.get_sampler(), BaseSampler)
    assert not func.pass_config
    assert Function(lambda config: 1).pass_config


def test_a_sampler_method_returns_a_copy_and_a_second_sampler_is_refused() -> None:
    bounds = Float(0, 1)
    drawn = bounds.uniform()
    assert bounds.sampler is None
    assert drawn is not bounds
    with pytest.raises(ValueError, match="You can only choose one sampler"):
        drawn.normal()
    assert isinstance(drawn.quantized(0.5).sampler, Quantized)  # quantizing wraps it


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Float(None, 1).uniform(), "Uniform requires a lower bound"),
        (lambda: Float(0, None).uniform(), "Uniform requires a upper bound"),
        (lambda: Float(0, 1).loguniform(), "LogUniform requires a lower bound greater than 0"),
        (lambda: Integer(1, 0).loguniform(), "LogUniform requires a upper bound greater than 0"),
        (lambda: Float(0.05, 1).quantized(0.1), "lower variable bound 0.05 is not divisible"),
        (lambda: Float(None, None).normal(0, 0), r"SD has to be strictly greater than 0"),
        (lambda: Function(lambda a, b: 1), "callable with either 0 or 1 parameters"),
    ],
)
def test_what_ray_refuses_is_refused_with_rays_error(build: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_a_domain_that_cannot_be_one_of_tunecores_is_an_error_naming_the_field() -> None:
    with pytest.raises(InvalidFieldError) as caught:
        Float(0, 1).normal().to_domain()
    assert caught.value.field == "Float.upper"
    with pytest.raises(InvalidFieldError) as caught:
        parse_space({"x": {"y": Float(0, 1).quantized(0.25).quantized(0.5)}})
    assert caught.value.field == "Float.sampler"
    with pytest.raises(InvalidFieldError, match="objects are accepted only in Tuner"):
        parse_space({"x": Categorical([object()]).uniform()})


def test_isinstance_holds_for_hand_built_and_for_tunes_domains_by_kind() -> None:
    floats: list[object] = [Float(0, 1).uniform(), tune.uniform(0, 1), tune.qrandn(0, 1, 0.5)]
    for value in floats:
        assert isinstance(value, Float)
        assert isinstance(value, Domain)
        assert not isinstance(value, Integer | Categorical | Function)
    integers: list[object] = [Integer(0, 3).uniform(), tune.qlograndint(1, 8, 2)]
    for value in integers:
        assert [
            kind for kind in (Float, Integer, Categorical, Function) if isinstance(value, kind)
        ] == [Integer]
    assert isinstance(Categorical([1]).grid(), Categorical)
    assert isinstance(tune.sample_from(lambda: 1), Function)
    assert issubclass(Float, Domain)
    assert issubclass(type(tune.choice([1])), Categorical)


# -- Ray's sample(): numpy's draws for the same random_state ---------------------------------------


def test_sample_draws_what_numpy_draws_for_the_same_seed() -> None:
    def rng() -> np.random.Generator:
        return np.random.default_rng(7)

    assert Float(2, 5).uniform().sample(random_state=7) == rng().uniform(2, 5)
    assert Float(1e-3, 1).loguniform().sample(random_state=7) == pytest.approx(
        math.exp(rng().uniform(math.log(1e-3), 0))
    )
    assert Float(None, None).normal(1, 3).sample(random_state=7) == rng().normal(1, 3)
    assert Integer(0, 100).uniform().sample(random_state=7) == rng().integers(0, 100)
    assert Categorical("abcde").uniform().sample(random_state=7) == "abcde"[rng().choice(5)]
    many = Float(0, 1).uniform().sample(size=4, random_state=7)
    assert list(many) == list(rng().uniform(0, 1, size=4))


def test_sample_accepts_a_generator_a_legacy_random_state_or_none() -> None:
    domain = Integer(0, 1000).uniform()
    assert domain.sample(random_state=np.random.default_rng(3)) == np.random.default_rng(
        3
    ).integers(0, 1000)
    legacy = np.random.RandomState(3)
    assert domain.sample(random_state=legacy) == np.random.RandomState(3).randint(0, 1000)
    assert 0 <= domain.sample() < 1000


def test_quantized_samples_lie_on_the_multiples_of_q_as_rays_do() -> None:
    steps = Integer(1, 10).uniform().quantized(2).sample(size=200, random_state=1)
    assert set(steps) == {2, 4, 6, 8, 10}  # Ray 2.60: the multiples' indices, upper included
    assert all(type(step) is int for step in steps)
    ones = Integer(1, 4).uniform().quantized(1).sample(size=200, random_state=1)
    assert set(ones) == {1, 2, 3}  # ... but for q == 1, upper excluded
    tenths = Float(0, 1).uniform().quantized(0.1).sample(size=200, random_state=1)
    assert all(math.isclose(value * 10, round(value * 10)) for value in tenths)
    assert {round(value, 6) for value in tenths} == {round(k / 10, 6) for k in range(11)}


def test_a_function_is_called_with_the_config_as_ray_calls_it() -> None:
    assert Function(lambda: 3).sample() == 3
    assert Function(lambda spec: spec.config.a + 1).sample(config={"a": 4}) == 5
    assert Function(lambda config: config["a"] * 2).sample(config={"a": 4}) == 8
    with pytest.raises(RuntimeError, match="Do not call `sample\\(\\)` on grid"):
        Categorical([1, 2]).grid().sample()


# -- in a param space, a searcher's space and PBT's mutations ---------------------------


def test_the_tuners_space_holds_the_domains_and_logs_no_object() -> None:
    space, objects = split_objects(
        {
            "lr": Float(1e-4, 1e-1).loguniform(),
            "nested": {"layers": Integer(1, 4).uniform(), "act": Categorical(["a", "b"]).grid()},
            "scaled": Function(lambda spec: spec.config.lr * 10),
        }
    )
    assert space["lr"] == tune.loguniform(1e-4, 1e-1)
    assert space["nested"] == {"layers": tune.randint(1, 4), "act": tune.grid_search(["a", "b"])}
    assert not objects.places
    logged = without_functions(parse_space(space))  # what the generator keeps and logs
    assert from_msgpack(to_msgpack(logged), ParamSpace) == logged
    assert [p.path for p in logged.derived] == [("scaled",)]


def test_a_categorical_over_objects_is_split_as_tune_choice_over_objects_is() -> None:
    model = object()
    space, objects = split_objects({"model": Categorical(["plain", model]).uniform()})
    assert space["model"] == Choice(["plain", "<object model[1]>"])
    assert objects.places == {(("model",), 1)}


def test_pbt_mutations_take_a_hand_built_domain() -> None:
    pbt = PopulationBasedTraining(
        hyperparam_mutations={"lr": Float(1e-4, 1e-1).loguniform(), "w": [1, 2]},
    )
    assert pbt.hyperparam_mutations["lr"] == tune.loguniform(1e-4, 1e-1)


def test_optuna_searches_a_hand_built_space() -> None:
    pytest.importorskip("optuna")
    from tunecore.search.optuna import OptunaSearch  # noqa: PLC0415

    space = {"x": Float(-2, 2).uniform(), "n": Integer(1, 5).uniform(), "c": Categorical("ab")}
    search = OptunaSearch(space, metric="loss", mode="min", seed=3)
    for index in range(5):
        config = search.suggest(f"t{index}")
        assert isinstance(config, dict)
        assert -2 <= config["x"] < 2
        assert config["n"] in range(1, 5)
        assert config["c"] in "ab"
        search.on_trial_complete(f"t{index}", {"loss": config["x"] ** 2})
    spec = search.to_spec()  # what the log holds of the searcher: JSON
    assert json.loads(json.dumps(spec)) == spec


def test_hyperopt_converts_a_hand_built_space() -> None:
    pytest.importorskip("hyperopt")
    from tunecore.search.hyperopt import HyperOptSearch  # noqa: PLC0415

    search = HyperOptSearch(
        {"lr": Float(1e-4, 1e-1).loguniform(), "act": Categorical(["relu", "tanh"]).uniform()},
        metric="loss",
        mode="min",
        random_state_seed=5,
    )
    config = search.suggest("t0")
    assert isinstance(config, dict)
    assert 1e-4 <= config["lr"] <= 1e-1
    assert config["act"] in ("relu", "tanh")
