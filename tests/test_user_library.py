"""`tests/typing/user_library.py`, the typed-library user's program, runs
and gets what docs/offline-lab.md says it gets (its typing is checked in
`tests/test_user_typing.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.typing import user_library


def test_the_core_stepped_by_hand_starts_two_trials_then_the_third() -> None:
    assert user_library.core_by_hand() == ["trial_00000", "trial_00001", "trial_00002"]


def test_a_scheduler_driven_by_hand_gives_the_stopped_trials_cpu_away() -> None:
    assert user_library.policy_by_hand() == ["t_00002"]


def test_a_simulated_experiment_replays_and_reads_back(tmp_path: Path) -> None:
    path = user_library.simulated(tmp_path)
    config, outcome = user_library.read_back(path)
    assert outcome.original.trials == outcome.what_if.trials == 8
    # ASHA ran the best trial to max_t: its best is the curve's value there
    assert outcome.original.best == user_library.curve(config, 9)[0]["loss"]


def test_a_simulation_given_a_run_config_without_verbose_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`simulate`'s docstring: progress output is off unless `run_config`
    sets `verbose` (naming the experiment's storage does not)."""
    user_library.simulated(tmp_path)
    assert capsys.readouterr().out == ""
