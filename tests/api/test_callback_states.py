"""The callbacks' saved states (`api.callback_states`) are tunecore's own
file in the experiment directory: never written or read through a link."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tunecore.api.callback_states import STATES_FILE, restore_states, save_states
from tunecore.shell.callbacks import Callback


class Counting(Callback):
    def __init__(self, count: int = 0) -> None:
        self.count = count

    def get_state(self) -> dict[str, object]:
        return {"count": self.count}

    def set_state(self, state: dict[str, object]) -> None:
        count = state["count"]
        assert isinstance(count, int)
        self.count = count


def test_a_state_saved_is_handed_back(tmp_path: Path) -> None:
    save_states([Counting(3)], tmp_path)
    restored = Counting()
    restore_states([restored], tmp_path)
    assert restored.count == 3


@pytest.mark.parametrize("linked", [STATES_FILE, f"{STATES_FILE}.tmp"])
def test_a_link_in_the_experiment_directory_is_not_written_through(
    tmp_path: Path, linked: str
) -> None:
    """The states went to `callback_states.json.tmp`, a name anyone could
    predict, opened following links: a link planted there had the end of
    `fit()` overwrite the file it points to."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    experiment = tmp_path / "exp"
    experiment.mkdir()
    (experiment / linked).symlink_to(victim)

    save_states([Counting(3)], experiment)

    assert victim.read_text() == "keep"
    restored = Counting()
    restore_states([restored], experiment)
    assert restored.count == 3


def test_a_states_file_linked_elsewhere_is_not_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    save_states([Counting(99)], theirs)
    experiment = tmp_path / "exp"
    experiment.mkdir()
    (experiment / STATES_FILE).symlink_to(theirs / STATES_FILE)

    restored = Counting()
    with caplog.at_level(logging.WARNING):
        restore_states([restored], experiment)

    assert restored.count == 0
    assert f"{experiment / STATES_FILE}: a symbolic link" in caplog.text
