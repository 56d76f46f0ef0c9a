"""The TFRecord checksum: CRC-32C, in C when google-crc32c is installed
(the dev and bench environments have it) and in Python otherwise; both
must give the same bytes, which tensorboardX's reader checks
(`test_callbacks.read_scalars`)."""

from __future__ import annotations

import google_crc32c
from hypothesis import given
from hypothesis import strategies as st

from tunecore.shell import tfevents


def test_the_python_checksum_matches_the_standard_check_value() -> None:
    # RFC 3720's CRC-32C check value for the ASCII digits 1 to 9.
    assert tfevents.python_crc32c(b"123456789") == 0xE3069283
    assert tfevents.python_crc32c(b"") == 0


@given(st.binary(max_size=600))
def test_the_c_and_python_checksums_agree(data: bytes) -> None:
    assert google_crc32c.value(data) == tfevents.python_crc32c(data)


def test_records_are_checksummed_in_c_when_google_crc32c_is_compiled() -> None:
    assert google_crc32c.implementation == "c"
    assert tfevents.crc32c is google_crc32c.value
