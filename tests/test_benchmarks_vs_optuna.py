"""The in-process anchor against Optuna: a run that did not do the work
fails its check, and a small sweep prints every row with what each pruned."""

from __future__ import annotations

import pytest
from benchmarks import vs_optuna
from benchmarks.vs_optuna import Run


def test_a_run_that_skipped_work_fails_its_check() -> None:
    done = Run(seconds=0.1, iterations=[1, 4, 16], pruned=2)
    assert vs_optuna.check("x", done, trials=3, iterations=16) is None
    fewer = Run(seconds=0.1, iterations=[1, 16], pruned=1)
    assert "2 trials, expected 3" in str(vs_optuna.check("x", fewer, trials=3, iterations=16))
    unpruned = Run(seconds=0.1, iterations=[16, 16, 16], pruned=0)
    assert "nothing was pruned" in str(vs_optuna.check("x", unpruned, trials=3, iterations=16))
    short = Run(seconds=0.1, iterations=[0, 1, 4], pruned=3)
    assert "out of 1..16" in str(vs_optuna.check("x", short, trials=3, iterations=16))


def test_a_small_sweep_prints_every_row(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("optuna")
    assert vs_optuna.main(["--trials", "12", "--iterations", "16", "--repeats", "1"]) == 0
    table = capsys.readouterr().out
    names = (vs_optuna.TUNECORE, vs_optuna.TUNECORE_FSYNC, vs_optuna.OPTUNA_JOURNAL)
    for name in (*names, vs_optuna.OPTUNA_MEMORY):
        assert f"| {name} | " in table
    assert "tunecore / Optuna with its journal:" in table
    assert "Failures" not in table
