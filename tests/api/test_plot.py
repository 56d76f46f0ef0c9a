"""`tunecore plot`: curves, pauses, stops and the rung cutoffs they missed,
from a finished experiment's log and from a running one's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tunecore
from tunecore import RunConfig, TuneConfig
from tunecore.api.plot import collect, render, render_what_if
from tunecore.api.whatif import what_if
from tunecore.cli import main
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.hyperband import HyperBandScheduler, band_plan
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.model import JsonDict, Resources
from tunecore.shell.eventlog import log_path, read_log

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    x = config["x"]
    assert isinstance(x, float)
    return {"loss": (x - 0.3) ** 2 + 1.0 / iteration}, 1.0 + x


def run(root: Path, name: str, scheduler: ASHAScheduler | HyperBandScheduler) -> Path:
    tunecore.simulate(
        curve,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=TuneConfig(
            num_samples=20, metric="loss", mode="min", scheduler=scheduler, seed=2
        ),
        run_config=RunConfig(name=name, storage_path=str(root), verbose=0),
        cluster=Resources(cpu=4),
    )
    return root / name


@pytest.fixture(scope="module")
def stopping(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scheduler = ASHAScheduler(max_t=27, grace_period=1, reduction_factor=3)
    return run(tmp_path_factory.mktemp("plot"), "stopping", scheduler)


def test_each_stop_shows_the_rung_cutoff_the_trial_missed(stopping: Path) -> None:
    drawing = collect(stopping)
    assert (drawing.metric, drawing.x_key) == ("loss", "training_iteration")
    assert len(drawing.curves) == 20
    stopped = [c for c in drawing.curves.values() if c.stopped]
    assert stopped
    for curve_ in stopped:
        assert curve_.xs[-1] < 27  # a trial at max_t is not "stopped early"
        assert curve_.cutoff is not None
        assert curve_.ys[-1] > curve_.cutoff  # worse than the bar (min mode)
    [rungs] = drawing.rungs.values()  # one bracket
    assert rungs[0] == (1.0, 20)  # every trial reached the first rung
    assert [m for m, _ in rungs] == [1.0, 3.0, 9.0, 27.0]
    assert [n for _, n in rungs] == sorted((n for _, n in rungs), reverse=True)


def test_hyperband_draws_each_brackets_rungs_from_its_plan(tmp_path: Path) -> None:
    scheduler = HyperBandScheduler(max_t=27, reduction_factor=3)
    drawing = collect(run(tmp_path, "hyperband", scheduler))
    assert len(drawing.rungs) > 1  # 20 trials fill more than one bracket
    plans = {plan.s: plan for plan in band_plan(27, 3)}
    for label, rungs in drawing.rungs.items():
        s = int(label.split("s=")[1].rstrip(")"))
        assert [m for m, _ in rungs] == [float(m) for m in plans[s].milestones]
        counts = [n for _, n in rungs]
        assert counts == sorted(counts, reverse=True)  # a rung holds at most the one below
        assert all(n <= size for n, size in zip(counts, plans[s].sizes, strict=True))
    # Every trial is in one bracket and reached that bracket's first rung.
    assert sum(rungs[0][1] for rungs in drawing.rungs.values()) == 20
    png = render(drawing, tmp_path / "hyperband.png")
    assert png.read_bytes().startswith(PNG_MAGIC)


def test_pauses_are_marked_under_the_promotion_variant(tmp_path: Path) -> None:
    scheduler = ASHAScheduler(max_t=9, grace_period=1, reduction_factor=3, variant="promotion")
    drawing = collect(run(tmp_path, "promotion", scheduler))
    assert any(c.paused_at for c in drawing.curves.values())


def test_a_running_experiment_draws_what_its_log_holds_so_far(
    stopping: Path, tmp_path: Path
) -> None:
    running = tmp_path / "running"
    shutil.copytree(stopping, running)
    contents = read_log(running)
    log = log_path(running)
    log.write_bytes(log.read_bytes()[: len(contents.data) // 2])  # mid-record, too
    for snapshot in (running / "snapshots").glob("*"):
        snapshot.unlink()
    drawing = collect(running)
    full = collect(stopping)
    assert (
        0
        < sum(len(c.xs) for c in drawing.curves.values())
        < sum(len(c.xs) for c in full.curves.values())
    )
    assert render(drawing, tmp_path / "running.png").read_bytes().startswith(PNG_MAGIC)


def test_the_cli_writes_a_png_or_an_html_page(
    stopping: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plot", str(stopping)]) == 0
    png = stopping / "curves.png"
    assert png.read_bytes().startswith(PNG_MAGIC)
    assert png.stat().st_size > 20_000  # curves, markers, two panels: not an empty frame
    page = tmp_path / "curves.html"
    assert main(["plot", str(stopping), "--out", str(page)]) == 0
    assert '<img alt="loss" src="data:image/png;base64,iVBOR' in page.read_text()
    assert "20 trials drawn to" in capsys.readouterr().out


def test_the_cli_names_a_bad_out_flag(stopping: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plot", str(stopping), "--out", "curves.jpg"]) == 2
    assert "--out: 'curves.jpg' must end in .png or .html" in capsys.readouterr().err


def grows_with_rate(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    rate = config["lr"]
    assert isinstance(rate, float)
    return {"score": iteration * rate}, 1.0


def test_pbt_exploits_are_drawn_from_taker_to_donor(tmp_path: Path) -> None:
    pbt = PopulationBasedTraining(
        perturbation_interval=3,
        hyperparam_mutations={"lr": [0.1, 0.5, 1.0, 2.0]},
        quantile_fraction=0.5,
        seed=1,
    )
    tunecore.simulate(
        grows_with_rate,
        param_space={"lr": tunecore.grid_search([0.1, 0.5, 1.0, 2.0])},
        tune_config=TuneConfig(metric="score", mode="max", scheduler=pbt, seed=3),
        run_config=RunConfig(name="pbt", storage_path=str(tmp_path), verbose=0),
        cluster=Resources(cpu=4),
        max_iterations=18,
    )
    drawing = collect(tmp_path / "pbt")
    assert drawing.exploits
    ids = list(drawing.curves)
    fastest = ids[-1]  # lr 2.0 leads throughout: it is only ever a donor
    assert all(taker != fastest for _, taker, _ in drawing.exploits)
    assert any(donor == fastest for _, _, donor in drawing.exploits)
    for _, taker, donor in drawing.exploits:
        assert taker != donor
        assert drawing.curves[taker].exploited_at
    png = render(drawing, tmp_path / "pbt.png")
    assert png.read_bytes().startswith(PNG_MAGIC)


def test_a_what_if_is_drawn_trial_by_trial(stopping: Path, tmp_path: Path) -> None:
    result = what_if(stopping, ASHAScheduler(max_t=27, grace_period=1, reduction_factor=2))
    assert len(result.original.ran) == len(result.what_if.ran) == len(result.trial_ids) == 20
    assert sum(result.what_if.ran) == result.what_if.iterations
    out = render_what_if(result, tmp_path / "what_if.png")
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert (
        main(
            [
                "simulate",
                "--from",
                str(stopping),
                "--scheduler",
                "fifo",
                "--plot",
                str(tmp_path / "w.html"),
            ]
        )
        == 0
    )
    assert "data:image/png;base64," in (tmp_path / "w.html").read_text()
