"""`tunecore.utils.validate_save_restore` on real Ray actors."""

from __future__ import annotations

import pytest

from tests.integration.trainables import Counter, SaveFails
from tunecore.utils import validate_save_restore

pytestmark = pytest.mark.usefixtures("ray_cluster")


def test_a_class_that_saves_and_restores_its_state_passes() -> None:
    assert validate_save_restore(Counter) is True


def test_a_class_that_cannot_save_fails_with_its_own_error() -> None:
    with pytest.raises(OSError, match="disk full"):
        validate_save_restore(SaveFails)
