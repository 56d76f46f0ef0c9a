"""Stored experiments someone changed (storage54's attacks): what a
resume, the readers and a stale worker make of names and objects tunecore
never wrote. Each test runs on `file://` and on a local S3 server."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.api.test_mirrored_fit import counting, run_failing, trial_dirs
from tests.storage_fixtures import StorageTarget
from tunecore import ResultGrid, Tuner
from tunecore.shell.mirror.claims import TakenOverError, check_not_taken_over
from tunecore.shell.storage.resolve import within

TARGETS = ["file_store", "s3_store"]


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> StorageTarget:
    given: StorageTarget = request.getfixturevalue(request.param)
    return given


def forge_lapsed_lease(target: StorageTarget, generation: int) -> None:
    lease = {
        "host": "elsewhere",
        "pid": 7,
        "token": "forged",
        "renewed": time.time() - 3600,
        "generation": generation,
    }
    target.store.write_bytes("exp/driver.lease", json.dumps(lease).encode())


def scores(target: StorageTarget) -> list[object]:
    [result] = list(ResultGrid.from_path(target.experiment_uri("exp")))
    return [result.metrics.get("score"), result.error is None]


def test_a_lease_generation_past_eight_digits_loses_nothing_it_recorded(
    target: StorageTarget, staging: Path
) -> None:
    """A doctored lease naming generation 99,999,999 took the next driver
    to generation 100,000,000, whose names have nine digits. Every reader
    expected eight: the resume's log objects were left out, so the trial it
    finished read as the errored one again, and the next take-over went
    back to generation 2 (below it), which a worker of 100,000,000 never
    saw as a later claim."""
    run_failing(target)  # the trial ended in ERROR at step 2
    forge_lapsed_lease(target, 99_999_999)
    shutil.rmtree(staging)
    Tuner.restore(target.experiment_uri("exp"), counting, resume_errored=True).fit()
    assert scores(target) == [3, True]
    shutil.rmtree(staging)
    Tuner.restore(target.experiment_uri("exp"), counting).fit()  # the next take-over
    assert scores(target) == [3, True]
    events = within(target.store, "exp")
    assert any(name.startswith("claim_g100000001_") for name in events.list("events"))
    with pytest.raises(TakenOverError, match="generation 100000001"):
        check_not_taken_over(events, 100_000_000, "save")


def test_a_claim_in_other_digits_is_no_claim(target: StorageTarget) -> None:
    """`\\d` took Arabic-Indic digits, which `int` reads: a claim named in
    them fenced the log as a real one of that generation would."""
    run_failing(target)
    events = within(target.store, "exp")
    forged = "claim_g" + "\N{ARABIC-INDIC DIGIT NINE}" * 8
    events.write_bytes(f"events/{forged}", b"")
    check_not_taken_over(events, 1, "save")
    assert trial_dirs(target, "exp")
