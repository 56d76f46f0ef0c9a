"""`tunecore.search._contract`: the argument checks the searchers share."""

from __future__ import annotations

import pytest

from tunecore.model import InvalidFieldError
from tunecore.search._contract import check_integer


@pytest.mark.parametrize(
    ("value", "minimum", "optional", "accepted"),
    [
        (1.5, None, False, "an integer"),
        (None, None, False, "an integer"),
        (True, 0, False, "an integer >= 0"),
        (0, 1, False, "an integer >= 1"),
        ("3", None, True, "an integer, or None"),
        (-1, 0, True, "an integer >= 0, or None"),
    ],
)
def test_a_bad_integer_is_an_error_naming_the_field_the_value_and_what_is_accepted(
    value: object, minimum: int | None, optional: bool, accepted: str
) -> None:
    with pytest.raises(InvalidFieldError) as raised:
        check_integer("HEBOSearch", "max_concurrent", value, minimum=minimum, optional=optional)
    message = str(raised.value)
    assert message.startswith(f"HEBOSearch.max_concurrent={value!r}")
    assert message.endswith(f"expected {accepted}")


@pytest.mark.parametrize(
    ("value", "minimum", "optional"),
    [(0, None, False), (-7, None, False), (1, 1, False), (None, 0, True), (5, 0, True)],
)
def test_a_good_integer_passes(value: object, minimum: int | None, optional: bool) -> None:
    check_integer("ZOOptSearch", "seed", value, minimum=minimum, optional=optional)
