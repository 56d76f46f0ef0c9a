"""The search benchmarks' harness: the same seeds print the same table, a
missing searcher is named and skipped, and the statistics are the usual ones."""

from __future__ import annotations

import sys
import types
import warnings
from pathlib import Path

import pytest
from benchmarks import search_quality
from benchmarks.objectives import BRANIN
from benchmarks.search_quality import Task, Unavailable

from tunecore.shell.searchers import SearchResumeWarning


def test_quartiles_interpolate_between_order_statistics() -> None:
    assert search_quality.quartiles([4.0, 1.0, 3.0, 2.0, 5.0]) == (2.0, 3.0, 4.0)
    assert search_quality.quartiles([1.0, 2.0, 3.0, 4.0]) == (1.75, 2.5, 3.25)
    assert search_quality.quartiles([7.0]) == (7.0, 7.0, 7.0)


def test_the_same_seeds_print_the_same_table(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--seeds", "2", "--objectives", "branin", "--methods", "random,tpe"]
    assert search_quality.main(argv) == 0
    first = capsys.readouterr().out
    assert search_quality.main(argv) == 0
    assert capsys.readouterr().out == first
    assert "| random (BasicVariantGenerator) | 1 |" in first
    assert "| random (BasicVariantGenerator) | 8 |" in first
    assert "`python -m benchmarks search_quality --seeds 2 --objectives branin" in first


def test_random_search_finds_values_no_better_than_the_optimum() -> None:
    task = Task("branin", BRANIN, 20)
    outcome = search_quality.run_once(task, search_quality.RANDOM, seed=3, concurrency=8)
    assert outcome.best >= BRANIN.optimum
    assert outcome.iterations == 20


def test_a_missing_module_is_unavailable_and_named() -> None:
    with pytest.raises(Unavailable, match=r"tunecore\.search\.no_such_module\.Thing"):
        search_quality._build("tunecore.search.no_such_module", "Thing")


def test_a_searcher_whose_package_is_missing_is_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class NeedsPackage:
        def __init__(self) -> None:
            raise ImportError("NeedsPackage needs thing: pip install 'tunecore[thing]'")

    module = types.ModuleType("fake_searchers")
    module.NeedsPackage = NeedsPackage  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_searchers", module)
    with pytest.raises(Unavailable, match=r"pip install 'tunecore\[thing\]'"):
        search_quality._build("fake_searchers", "NeedsPackage")


def test_a_skipped_method_gets_a_line_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = search_quality.Method(
        "missing",
        "Missing",
        lambda _: search_quality._build("tunecore.search.no_such_module", "Thing"),
        search_quality._no_scheduler,
    )
    monkeypatch.setitem(search_quality.METHODS, "branin", (search_quality.RANDOM, missing))
    assert search_quality.main(["--seeds", "1", "--objectives", "branin"]) == 0
    out = capsys.readouterr().out
    assert "| random (BasicVariantGenerator) | 1 |" in out
    assert "Missing skipped: tunecore.search.no_such_module.Thing is not available" in out


def test_unknown_objectives_are_named() -> None:
    with pytest.raises(SystemExit):
        search_quality.main(["--objectives", "rosenbrock"])


def test_the_overhead_benchmark_makes_optunas_own_suggestions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Inside tunecore and bare, the same sampler and seed suggest the same
    configs, and the table says so; the rebuild repeats them too (a rebuild
    that diverged would warn, an error here)."""
    pytest.importorskip("optuna")
    pytest.importorskip("tunecore.search.optuna")
    from benchmarks import search_overhead  # noqa: PLC0415

    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchResumeWarning)
        assert search_overhead.main(["--trials", "15", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "| same suggestions as bare Optuna | yes |" in out
    assert "| OptunaSearch (TPESampler), ms per trial | 15 trials |" in out
    assert "- OptunaSearch (TPESampler): added by tunecore at 15 trials <= 0.5 ms: " in out


def test_the_overhead_targets_say_met_or_not() -> None:
    """What tunecore adds is the run less Optuna's own ask and tell inside
    it, less the driver's time in random search run beside a bare loop of
    the same optimizer (not random search alone, whose driver code runs
    warm); the rebuild is judged at the largest size."""
    pytest.importorskip("optuna")
    from benchmarks.search_overhead import Measured, Timings, targets  # noqa: PLC0415

    def row(trials: int, run_s: float, rebuild_s: float) -> Measured:
        return Measured(
            trials=trials,
            searcher="optuna",
            sampler="tpe",
            bare=Timings(suggest_s=0.9 * trials / 1000, observe_s=0.1 * trials / 1000),
            tunecore=Timings(
                suggest_s=0.9 * trials / 1000, observe_s=0.1 * trials / 1000, run_s=run_s
            ),
            random_run_s=0.3 * trials / 1000,
            beside=Timings(run_s=1.5 * trials / 1000, object_s=1.0 * trials / 1000),
            rebuild_s=rebuild_s,
            walk_s=0.0,
            same_suggestions=True,
        )

    # 200 trials: 0.3 s run = 1.5 ms/trial, less 1.0 Optuna, less 0.5 of the
    # driver beside the bare loop (1.5 less its 1.0 in the object): 0.0 ms.
    # 1,000 trials: 2.1 s run = 2.1 ms/trial: 0.6 ms added, over the target
    # (0.8 against random search alone).
    found = targets([row(200, 0.3, 0.1), row(1000, 2.1, 1.1)])
    assert [(key, what.split(": ", 1)[1], met) for key, what, _, met in found] == [
        ("added", "added by tunecore at 200 trials <= 0.5 ms", True),
        ("added", "added by tunecore at 1,000 trials <= 0.5 ms", False),
        ("flat", "added by tunecore at 1,000 trials <= 1.2x at 200, or <= 0.5 ms", False),
        ("rebuild", "restore's rebuild at 1,000 trials <= 1.2x bare ask + tell", True),
    ]
    assert found[1][2] == "0.60 ms / trial"


def test_the_control_run_drives_its_own_searcher_as_the_bare_loop_does(
    tmp_path: Path,
) -> None:
    """Beside tunecore's random search, the control's searcher object makes
    bare Optuna's suggestions (the same optimizer work as the searcher
    run's), one per trial, timed."""
    pytest.importorskip("optuna")
    pytest.importorskip("tunecore.search.optuna")
    from benchmarks import search_overhead  # noqa: PLC0415

    searcher = search_overhead.new_searcher("optuna", "tpe")
    beside = search_overhead.random_search_beside(12, tmp_path, searcher)
    assert beside.configs == search_overhead.bare_optuna(12, "tpe").configs
    assert beside.object_s > 0


def test_a_row_whose_runs_ended_early_says_how_early() -> None:
    task = Task("branin", BRANIN, 50)
    outcomes = (
        search_quality.Outcome(best=0.5, trials=50, iterations=50),
        search_quality.Outcome(best=0.4, trials=31, iterations=31),
        search_quality.Outcome(best=0.6, trials=50, iterations=50),
    )
    text = search_quality.table(task, [search_quality.Row(search_quality.RANDOM, 8, outcomes)])
    assert (
        "| random (BasicVariantGenerator) | 8 | 3 | 0.5000 | [0.4500, 0.5500] | 50 (min 31) |"
        in text
    )
    assert "Fewer trials run than the budget" in text
