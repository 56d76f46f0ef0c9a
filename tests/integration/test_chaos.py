"""The chaos test: a driver SIGKILLed at random moments and resumed loses no
result, repeats none, and ends where an uninterrupted run ends.

The work is `scripts/chaos.py` (`python scripts/chaos.py run DIR --kills N
--seed S` is the same loop, for more kills and other seeds); this test runs
it with 2 kills. The killed drivers and the baseline are subprocesses, each
with a local Ray of its own.

The test asks for the session's Ray (`ray_cluster`) on purpose: with a Ray
already up in this process, a driver's `ray.init()` must still start its
own (it does: Ray joins another cluster only through RAY_ADDRESS or
`ray start`'s address file, and the loop removes RAY_ADDRESS from the
drivers' environment), or killing the driver would kill nothing of Ray's
and the kill would not be a crash. Within the whole suite the session's
Ray is started once anyway.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from scripts import chaos

from tests.storage_fixtures import StorageTarget

SEED = 15
"""Kill delays 1.93 s and 0.02 s after the driver's first new event (with
`max_delay=2.0`): one mid-run, one as the resumed driver restarts its
trials. The uninterrupted run lasts some 8 s after its first event here."""

pytestmark = [pytest.mark.usefixtures("ray_cluster"), pytest.mark.slow]


def test_a_driver_killed_twice_and_resumed_loses_and_repeats_no_result(tmp_path: Path) -> None:
    import ray  # noqa: PLC0415 - only the integration tests need Ray

    # A last driver that has not ended after 120 s never will (the whole
    # test takes about 55 s): it is killed and the checks say what was left.
    report = chaos.run_chaos(tmp_path, kills=2, seed=SEED, max_delay=2.0, timeout=120.0)
    text = report.render()
    print(text)

    # Both kills hit a running driver, and only the last resume ran to its end.
    assert [d.kill_landed for d in report.drives] == [True, True, False], text
    assert report.drives[-1].returncode == 0, text
    assert report.baseline.returncode == 0, text
    # Every driver had its own Ray, none of them this session's.
    addresses = [d.gcs_address for d in [*report.drives, report.baseline]]
    assert None not in addresses, text
    assert ray.get_runtime_context().gcs_address not in addresses, text
    # The checks proper: (a) finished once and replay verifies, (b) the
    # result files, (c) the best result, (d) the checkpoints whole, (e) the
    # driver lock; and the drivers' processes.
    names = [c.name[:3] for c in report.checks if c.name.startswith("(")]
    assert names == ["(a)", "(b)", "(c)", "(d)", "(e)"]
    for check in report.checks:
        assert check.passed, text


PHASES_SEED = 6
"""Kills aimed, in this order, at any moment (with a second driver started
against the driver first), a resume's first milliseconds and a
checkpoint save."""


def test_kills_during_a_resume_and_a_checkpoint_save_and_a_second_driver(tmp_path: Path) -> None:
    """A second driver started while the first runs is refused, naming it;
    a resume killed a few milliseconds in, and a driver killed within 5 ms
    of a checkpoint directory appearing (mid-copy, copied but not logged,
    or just after: the report says which), are resumed with no result lost
    or repeated and every checkpoint the results name whole."""
    report = chaos.run_chaos(
        tmp_path,
        kills=3,
        seed=PHASES_SEED,
        max_delay=2.0,
        timeout=120.0,
        phases=list(chaos.PHASES),
        second_drivers=True,
    )
    text = report.render()
    print(text)

    assert [d.phase for d in report.drives] == ["normal", "resume", "checkpoint", "final"], text
    assert [d.kill_landed for d in report.drives] == [True, True, True, False], text
    assert [d.landed_in.split(",")[0] for d in report.drives[:3] if d.landed_in] == [
        "normal",
        "resume",
        "checkpoint",
    ], text
    # The first driver, with the whole experiment before it, held the lock
    # while the second driver asked: refused, naming its pid.
    first_second = report.second_drives[0]
    assert first_second.against is report.drives[0], text
    assert first_second.refused, text
    # A resume took over the lock a killed driver held.
    assert report.takeovers >= 1, text
    names = [c.name[:3] for c in report.checks if c.name.startswith("(")]
    assert names == ["(a)", "(b)", "(c)", "(d)", "(e)", "(f)"]
    for check in report.checks:
        assert check.passed, text


STORAGE_SEED = 15
"""One kill 1.93 s after the storage first holds the driver's log (its
first shipment, some 5 s in): the stored log names checkpoints by then."""


def test_a_driver_killed_with_its_experiment_in_s3_resumes_from_the_uri_alone(
    tmp_path: Path, s3_store: StorageTarget
) -> None:
    """Both experiments in a bucket on a local S3 server; the killed
    driver's resume runs in another staging directory (another machine)
    with nothing but the URI, and its stored result files lag behind its
    stored log (they are shipped once they stop growing): (b) holds only
    because the resume takes those rows from the log."""
    report = chaos.run_chaos(
        tmp_path, kills=1, seed=STORAGE_SEED, max_delay=2.0, timeout=120.0, storage=s3_store.uri
    )
    text = report.render()
    print(text)

    assert [d.kill_landed for d in report.drives] == [True, False], text
    # the resume worked in a staging directory of its own
    assert len({d.workdir for d in report.drives}) == 2, text
    assert report.drives[-1].returncode == 0, text
    checks = {c.name[:3]: c for c in report.checks if c.name.startswith("(")}
    assert list(checks) == ["(a)", "(b)", "(c)", "(d)", "(e)"], text
    assert "in storage" in checks["(d)"].name, text
    for check in report.checks:
        assert check.passed, text


def test_kills_during_a_compaction_and_a_lease_take_over_in_s3(
    tmp_path: Path, s3_store: StorageTarget
) -> None:
    """Issue 37: one kill between a compaction's merged object and the
    deletions it covers, one in the resume taking the killed driver's
    lease over; each driver resumed from the URI alone on a fresh machine.
    Shipping every 0.1 s, so that the first driver compacts."""
    report = chaos.run_chaos(
        tmp_path,
        kills=2,
        seed=STORAGE_SEED,
        timeout=180.0,
        phases=["compaction", "takeover"],
        storage=s3_store.uri,
        sync_period=0.1,
    )
    text = report.render()
    print(text)

    assert [d.phase for d in report.drives] == ["compaction", "takeover", "final"], text
    assert [d.kill_landed for d in report.drives] == [True, True, False], text
    assert report.drives[0].landed_in is not None
    assert report.drives[0].landed_in.startswith("compaction, before its deletion"), text
    assert report.drives[1].landed_in is not None
    assert report.drives[1].landed_in.startswith("take-over"), text
    assert report.drives[-1].returncode == 0, text
    for check in report.checks:
        assert check.passed, text


def test_storage_phases_need_storage_and_a_take_over_is_never_the_first_kill(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match="compaction"):
        chaos.run_chaos(tmp_path, kills=1, seed=1, phases=["compaction"])
    for seed in range(50):
        plan = chaos.plan_phases(["takeover", "compaction"], 4, random.Random(seed))
        assert plan[0] == "compaction", plan


def test_the_kills_aim_at_every_phase_in_turn_and_one_phase_keeps_the_old_delays() -> None:
    for seed in range(50):
        plan = chaos.plan_phases(list(chaos.PHASES), 7, random.Random(seed))
        assert plan[0] != "resume"  # the first driver starts the experiment
        for block in (plan[0:3], plan[3:6]):
            assert sorted(block) == sorted(chaos.PHASES), plan
    # Kills of one phase draw nothing, so a seed's delays are those of the
    # runs before phases existed (the test above relies on seed 15's).
    rng = random.Random(SEED)
    assert chaos.plan_phases(["normal"], 4, rng) == ["normal"] * 4
    assert rng.random() == random.Random(SEED).random()
