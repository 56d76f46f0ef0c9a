"""PBT's policy files (`shell.pbt_policy`) are tunecore's own files in the
experiment directory: never written or read through a symbolic link."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tunecore.model import RecordExploit
from tunecore.shell.pbt_policy import GLOBAL_FILE, policy_file, record_exploit

EXPLOIT = RecordExploit(
    trial_id="t2",
    donor_id="t1",
    trial_tag="2_lr=0.2",
    donor_tag="1_lr=0.1",
    trial_iteration=4,
    donor_iteration=5,
    donor_config={"lr": 0.1},
    config={"lr": 0.11},
)
LINE = json.dumps(["2_lr=0.2", "1_lr=0.1", 4, 5, {"lr": 0.1}, {"lr": 0.11}]) + "\n"


def test_the_global_file_and_the_trials_file_get_the_line(tmp_path: Path) -> None:
    policy_file(tmp_path, "t1").write_text("earlier\n")
    record_exploit(tmp_path, EXPLOIT)
    assert (tmp_path / GLOBAL_FILE).read_text() == LINE
    assert policy_file(tmp_path, "t2").read_text() == "earlier\n" + LINE


@pytest.mark.parametrize("linked", [GLOBAL_FILE, policy_file(Path(), "t2").name])
def test_a_policy_file_linked_elsewhere_is_not_written_through(
    tmp_path: Path, linked: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A link planted in place of `pbt_global.txt` or a trial's policy file
    had each exploit append to the file it points to. The global file is
    left out, with a warning; the trial's file, written whole, replaces
    the link."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    experiment = tmp_path / "exp"
    experiment.mkdir()
    (experiment / linked).symlink_to(victim)

    with caplog.at_level(logging.WARNING):
        record_exploit(experiment, EXPLOIT)

    assert victim.read_text() == "keep"
    if linked == GLOBAL_FILE:
        assert f"{experiment / linked}: a symbolic link" in caplog.text
    else:
        assert not (experiment / linked).is_symlink()
        assert (experiment / linked).read_text() == LINE


def test_a_donor_policy_file_linked_elsewhere_is_not_copied(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n")
    experiment = tmp_path / "exp"
    experiment.mkdir()
    policy_file(experiment, "t1").symlink_to(secret)

    with caplog.at_level(logging.WARNING):
        record_exploit(experiment, EXPLOIT)

    assert policy_file(experiment, "t2").read_text() == LINE
    assert f"{policy_file(experiment, 't1')}: a symbolic link" in caplog.text
