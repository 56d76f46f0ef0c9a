"""qrandn, lograndint and qlograndint: Ray Tune's names, bounds and draws."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tunecore
import tunecore.search
from tests.core.search.support import lograndints, qlograndints, qrandns, within
from tests.core.search.test_domains import draws
from tunecore.core.rng import seeded
from tunecore.core.search import (
    Domain,
    LogRandInt,
    QLogRandInt,
    QRandN,
    SamplingDomain,
    lograndint,
    qlograndint,
    qrandn,
)
from tunecore.model import InvalidFieldError
from tunecore.model.codec import from_msgpack, to_msgpack


def test_the_names_are_exported_where_ray_users_import_them() -> None:
    for module in (tunecore, tunecore.search):
        assert module.qrandn is qrandn
        assert module.lograndint is lograndint
        assert module.qlograndint is qlograndint
    assert lograndint(1, 10) == LogRandInt(1, 10)
    assert lograndint(1, 10, base=2) == LogRandInt(1, 10, 2.0)
    assert qlograndint(1, 10, 2) == QLogRandInt(1, 10, 2)
    assert qrandn(0, 1, 0.5) == QRandN(0.0, 1.0, 0.5)


def test_lograndint_excludes_its_upper_bound_and_reaches_its_lower() -> None:
    values = draws(lograndint(1, 4), 3000)
    assert set(values) == {1, 2, 3}
    assert all(type(v) is int for v in values)


def test_lograndint_is_uniform_in_the_exponent() -> None:
    values = draws(lograndint(1, 10_000), 4000)
    decades = Counter(int(math.log10(v)) for v in values)  # type: ignore[arg-type]
    assert set(decades) == {0, 1, 2, 3}
    assert all(800 < count < 1200 for count in decades.values()), decades


def test_qlograndint_includes_its_upper_bound_and_draws_multiples_of_q() -> None:
    values = draws(qlograndint(3, 20, 5), 3000)
    assert set(values) == {5, 10, 15, 20}
    assert set(draws(qlograndint(1, 3, 1), 3000)) == {1, 2, 3}


def test_qrandn_rounds_a_normal_draw_to_multiples_of_q() -> None:
    values = draws(qrandn(10.0, 2.0, 0.5), 4000)
    assert all(isinstance(v, float) and (v * 2).is_integer() for v in values)
    mean = sum(values) / len(values)  # type: ignore[arg-type]
    assert abs(mean - 10.0) < 0.15


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: lograndint(0, 10), "LogRandInt.low"),
        (lambda: lograndint(5, 5), "LogRandInt.high"),
        (lambda: lograndint(1.5, 5), "LogRandInt.low"),  # type: ignore[arg-type]
        (lambda: lograndint(1, 5, base=1), "LogRandInt.base"),
        (lambda: qlograndint(0, 10, 2), "QLogRandInt.low"),
        (lambda: qlograndint(1, 10, 0), "QLogRandInt.q"),
        (lambda: qlograndint(6, 9, 5), "QLogRandInt.high"),
        (lambda: qrandn(0, -1, 1), "QRandN.sd"),
        (lambda: qrandn(0, 1, 0), "QRandN.q"),
        (lambda: qrandn(math.nan, 1, 1), "QRandN.mean"),
    ],
)
def test_invalid_bounds_are_rejected_naming_the_field(build: object, field: str) -> None:
    with pytest.raises(InvalidFieldError, match=field.replace(".", r"\.")):
        build()  # type: ignore[operator]


@pytest.mark.parametrize(
    "domain", [qrandn(1, 2, 0.25), lograndint(2, 50, 2), qlograndint(1, 99, 3)]
)
def test_the_new_domains_round_trip_through_msgpack(domain: Domain) -> None:
    decoded = from_msgpack(to_msgpack(domain), Domain)
    assert decoded == domain
    assert type(decoded) is type(domain)


@given(
    domain=st.one_of(lograndints(), qlograndints(), qrandns),
    state=st.integers(0, 2**64 - 1),
)
def test_every_draw_lies_in_the_domain_and_is_a_pure_function_of_the_rng(
    domain: SamplingDomain, state: int
) -> None:
    rng = seeded(state)
    _, value = domain.sample(rng)
    assert within(domain, value), (domain, value)
    assert domain.is_valid(value)
    assert domain.sample(rng)[1] == value
