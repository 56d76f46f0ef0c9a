"""Domains one by one: validation, the values they draw, and serialization."""

from __future__ import annotations

import math
import statistics
from collections import Counter

import msgspec
import pytest

from tunecore.core.rng import Rng, seeded
from tunecore.core.search import (
    Choice,
    ConfigView,
    Domain,
    GridSearch,
    LogUniform,
    QLogUniform,
    QRandInt,
    QUniform,
    RandInt,
    RandN,
    SampleFrom,
    SamplingDomain,
    Uniform,
    choice,
    grid_search,
    loguniform,
    qloguniform,
    qrandint,
    quniform,
    randint,
    randn,
    sample_from,
    uniform,
)
from tunecore.model import InvalidFieldError, JsonValue
from tunecore.model.codec import from_msgpack, to_msgpack


def draws(domain: SamplingDomain, count: int, seed: int = 0) -> list[JsonValue]:
    rng = seeded(seed)
    values = []
    for _ in range(count):
        rng, value = domain.sample(rng)
        values.append(value)
    return values


def numbers(domain: SamplingDomain, count: int, seed: int = 0) -> list[float]:
    values = draws(domain, count, seed)
    assert all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    return [float(v) for v in values]  # type: ignore[arg-type]


# -- constructors --------------------------------------------------------------------------------


def test_constructor_functions_build_the_named_domains_with_ray_signatures() -> None:
    assert uniform(0, 1) == Uniform(0.0, 1.0)
    assert quniform(0, 1, 0.5) == QUniform(0.0, 1.0, 0.5)
    assert loguniform(1e-4, 1e-1) == LogUniform(1e-4, 1e-1, 10.0)
    assert qloguniform(1, 100, 1, base=2) == QLogUniform(1.0, 100.0, 1.0, 2.0)
    assert randint(0, 10) == RandInt(0, 10)
    assert qrandint(0, 10) == QRandInt(0, 10, 1)
    assert qrandint(0, 10, 5) == QRandInt(0, 10, 5)
    assert choice(("a", "b")) == Choice(["a", "b"])
    assert grid_search([1, 2]) == GridSearch([1, 2])
    assert randn() == RandN(0.0, 1.0)
    assert randn(3, 2) == RandN(3.0, 2.0)


def test_float_domains_store_floats_so_decoding_gives_an_equal_domain() -> None:
    domain = uniform(0, 1)
    assert isinstance(domain.low, float)
    assert isinstance(domain.high, float)


def two_arguments(first: object, second: object) -> object:
    return first


# -- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "field", "value"),
    [
        (lambda: uniform(2, 1), "Uniform.high", 1),
        (lambda: uniform(math.nan, 1), "Uniform.low", math.nan),
        (lambda: uniform(0, math.inf), "Uniform.high", math.inf),
        (lambda: uniform(True, 2), "Uniform.low", True),
        (lambda: quniform(0, 1, 0), "QUniform.q", 0),
        (lambda: quniform(0, 1, -0.5), "QUniform.q", -0.5),
        (lambda: quniform(0, 1, 0.3), "QUniform.high", 1.0),
        (lambda: quniform(0.1, 1, 0.25), "QUniform.low", 0.1),
        (lambda: quniform(2, 1, 1), "QUniform.high", 1),
        (lambda: loguniform(0, 1), "LogUniform.low", 0),
        (lambda: loguniform(-1, 1), "LogUniform.low", -1),
        (lambda: loguniform(1, -1), "LogUniform.high", -1),
        (lambda: loguniform(10, 1), "LogUniform.high", 1),
        (lambda: loguniform(1, 10, base=1), "LogUniform.base", 1),
        (lambda: qloguniform(0, 10, 1), "QLogUniform.low", 0),
        (lambda: qloguniform(1, 10, 0), "QLogUniform.q", 0),
        (lambda: qloguniform(1, 10, 4), "QLogUniform.low", 1.0),
        (lambda: randint(3, 3), "RandInt.high", 3),
        (lambda: randint(3, 1), "RandInt.high", 1),
        (lambda: randint(0, 2.5), "RandInt.high", 2.5),  # type: ignore[arg-type]
        (lambda: qrandint(0, 10, 0), "QRandInt.q", 0),
        (lambda: qrandint(5, 1), "QRandInt.high", 1),
        (lambda: qrandint(1, 4, 5), "QRandInt.high", 4),
        (lambda: choice([]), "Choice.categories", []),
        (lambda: grid_search([]), "GridSearch.values", []),
        (lambda: randn(0, -1), "RandN.sd", -1),
        (lambda: randn(math.inf, 1), "RandN.mean", math.inf),
        (lambda: sample_from(3), "SampleFrom.func", 3),  # type: ignore[call-overload]
        (lambda: sample_from(two_arguments), "SampleFrom.func", None),  # type: ignore[arg-type]
    ],
)
def test_an_invalid_domain_is_rejected_naming_the_field_and_the_value(
    build: object, field: str, value: object
) -> None:
    assert callable(build)
    with pytest.raises(InvalidFieldError) as raised:
        build()
    assert raised.value.field == field
    if value is not None and not (isinstance(value, float) and math.isnan(value)):
        assert raised.value.value == value
    assert str(raised.value).startswith(f"{field}=")


def test_the_low_above_high_error_says_what_would_be_accepted() -> None:
    with pytest.raises(InvalidFieldError, match=r"Uniform\.high=1 is invalid: expected .*low=2\.0"):
        uniform(2, 1)


def test_equal_bounds_are_allowed_where_ray_allows_them() -> None:
    assert draws(uniform(1.5, 1.5), 3) == [1.5, 1.5, 1.5]
    assert draws(loguniform(2, 2), 2) == [2.0, 2.0]
    assert draws(quniform(1, 1, 0.5), 2) == [1.0, 1.0]
    assert draws(qrandint(4, 4, 2), 2) == [4, 4]
    assert draws(randn(7, 0), 2) == [7.0, 7.0]


def test_choice_and_grid_values_must_be_plain_json_without_nested_domains() -> None:
    with pytest.raises(InvalidFieldError) as raised:
        choice(["adam", {"lr": uniform(0, 1)}])  # type: ignore[dict-item]
    assert raised.value.field == "Choice.categories[1]['lr']"
    with pytest.raises(InvalidFieldError) as raised:
        grid_search([1, {2, 3}])  # type: ignore[list-item]
    assert raised.value.field == "GridSearch.values[1]"
    with pytest.raises(InvalidFieldError):
        choice([{1: "int key"}])  # type: ignore[dict-item]


def test_choice_copies_tuples_into_lists() -> None:
    assert choice([(1, 2), "x"]).categories == [[1, 2], "x"]  # type: ignore[list-item]


# -- values drawn ---------------------------------------------------------------------------------


def test_sampling_is_pure_the_same_state_gives_the_same_value() -> None:
    domain = uniform(0, 1)
    rng = Rng(12345)
    assert domain.sample(rng) == domain.sample(rng)
    next_rng, _ = domain.sample(rng)
    assert next_rng != rng


def test_uniform_stays_in_its_half_open_interval() -> None:
    values = numbers(uniform(-2, 3), 2000)
    assert all(-2 <= v < 3 for v in values)


def test_quniform_values_are_multiples_of_q_within_the_bounds_both_reachable() -> None:
    values = numbers(quniform(0.5, 2.5, 0.5), 2000)
    assert set(values) == {0.5, 1.0, 1.5, 2.0, 2.5}
    tenths = numbers(quniform(0, 1, 0.1), 2000)
    assert all(0 <= v <= 1 for v in tenths)
    assert all(math.isclose(v / 0.1, round(v / 0.1)) for v in tenths)
    assert len({round(v, 9) for v in tenths}) == 11


def test_quniform_weights_its_end_points_by_half_as_ray_does() -> None:
    counts = Counter(numbers(quniform(0, 2, 1), 30000))
    assert set(counts) == {0.0, 1.0, 2.0}
    assert counts[1.0] / counts[0.0] == pytest.approx(2, rel=0.1)
    assert counts[1.0] / counts[2.0] == pytest.approx(2, rel=0.1)


def test_loguniform_stays_within_its_bounds_and_is_uniform_in_the_exponent() -> None:
    values = numbers(loguniform(1e-4, 1e-1), 4000)
    assert all(1e-4 <= v <= 1e-1 for v in values)
    exponents = [math.log10(v) for v in values]
    assert statistics.fmean(exponents) == pytest.approx(-2.5, abs=0.05)
    assert sum(v < 1e-3 for v in values) / len(values) == pytest.approx(1 / 3, abs=0.03)


def test_the_base_of_a_loguniform_does_not_change_its_draws() -> None:
    assert draws(loguniform(1, 1000, base=2), 50) == draws(loguniform(1, 1000), 50)


def test_qloguniform_values_are_multiples_of_q_within_the_bounds() -> None:
    values = numbers(qloguniform(1, 100, 1), 2000)
    assert all(1 <= v <= 100 and v == round(v) for v in values)
    assert min(values) == 1.0
    assert max(values) == 100.0


def test_randint_excludes_its_upper_bound() -> None:
    values = draws(randint(0, 3), 1000)
    assert set(values) == {0, 1, 2}
    assert all(type(v) is int for v in values)


def test_qrandint_includes_its_upper_bound_rounded_to_q() -> None:
    assert set(draws(qrandint(0, 10, 5), 500)) == {0, 5, 10}
    assert set(draws(qrandint(1, 3), 500)) == {1, 2, 3}
    assert set(draws(qrandint(1, 11, 3), 500)) == {3, 6, 9}
    assert set(draws(qrandint(-7, -1, 3), 500)) == {-6, -3}


def test_qrandint_is_uniform_over_its_multiples() -> None:
    counts = Counter(draws(qrandint(0, 10, 5), 30000))
    for value in (0, 5, 10):
        assert counts[value] / 30000 == pytest.approx(1 / 3, abs=0.02)


def test_choice_draws_every_category_and_copies_it() -> None:
    domain = choice(["a", [1, 2], {"k": "v"}])
    values = draws(domain, 300)
    assert {str(v) for v in values} == {"a", "[1, 2]", "{'k': 'v'}"}
    listed = next(v for v in values if isinstance(v, list))
    listed.append(3)
    assert domain.categories[1] == [1, 2]


def test_uniform_draws_average_to_the_midpoint() -> None:
    values = numbers(uniform(2, 6), 20000, seed=7)
    assert statistics.fmean(values) == pytest.approx(4.0, abs=0.05)
    assert statistics.pvariance(values) == pytest.approx(16 / 12, rel=0.05)


def test_randn_draws_average_to_the_mean_with_the_given_spread() -> None:
    values = numbers(randn(3, 2), 20000, seed=11)
    assert statistics.fmean(values) == pytest.approx(3.0, abs=0.1)
    assert statistics.pstdev(values) == pytest.approx(2.0, rel=0.05)


def test_randint_and_choice_draw_each_value_about_equally_often() -> None:
    counts = Counter(draws(randint(0, 4), 20000, seed=3))
    assert all(count / 20000 == pytest.approx(0.25, abs=0.02) for count in counts.values())
    picks = Counter(draws(choice(["x", "y"]), 20000, seed=5))
    assert picks["x"] / 20000 == pytest.approx(0.5, abs=0.02)


def test_is_valid_accepts_what_a_domain_draws_and_rejects_the_rest() -> None:
    assert uniform(0, 1).is_valid(0.5)
    assert not uniform(0, 1).is_valid(1.5)
    assert not uniform(0, 1).is_valid(True)
    assert quniform(0, 1, 0.25).is_valid(0.75)
    assert not quniform(0, 1, 0.25).is_valid(0.7)
    assert randint(0, 3).is_valid(2)
    assert not randint(0, 3).is_valid(3)
    assert qrandint(0, 10, 5).is_valid(10)
    assert not qrandint(0, 10, 5).is_valid(4)
    assert choice([1, "a"]).is_valid("a")
    assert not choice([1, "a"]).is_valid(True)
    assert grid_search([1, 2]).is_valid(2)
    assert randn().is_valid(-40.0)
    assert not randn().is_valid(None)


# -- serialization --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "domain",
    [
        uniform(0, 1),
        quniform(0, 1, 0.1),
        loguniform(1e-4, 1e-1),
        qloguniform(1, 100, 1),
        randint(0, 5),
        qrandint(0, 10, 5),
        choice(["a", 1, None, [1, 2], {"k": 1.5}]),
        grid_search([0.1, 0.01]),
        randn(1, 2),
    ],
    ids=lambda domain: type(domain).__name__,
)
def test_every_domain_but_sample_from_round_trips_through_msgpack_as_a_tagged_union(
    domain: Domain,
) -> None:
    decoded = from_msgpack(to_msgpack(domain), Domain)
    assert decoded == domain
    assert type(decoded) is type(domain)


def test_decoding_validates_a_domain() -> None:
    payload = to_msgpack({"type": "Uniform", "low": 2.0, "high": 1.0})
    with pytest.raises(msgspec.ValidationError, match=r"Uniform\.high"):
        from_msgpack(payload, Domain)


def double_lr(spec: ConfigView) -> JsonValue:
    lr = spec["lr"]
    assert isinstance(lr, float)
    return lr * 2


def test_sample_from_keeps_the_import_path_of_a_module_level_function() -> None:
    assert sample_from(double_lr).import_path == f"{__name__}:double_lr"
    assert sample_from(lambda spec: 1).import_path == ""


def test_sample_from_does_not_encode_because_msgspec_cannot_encode_a_function() -> None:
    with pytest.raises(TypeError, match="function"):
        to_msgpack(sample_from(double_lr))


def test_sample_from_accepts_functions_of_the_config_or_of_nothing() -> None:
    assert sample_from(double_lr).takes_config
    assert not sample_from(lambda: 1).takes_config
    assert isinstance(SampleFrom(double_lr), SampleFrom)
