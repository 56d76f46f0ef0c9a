"""`tunecore plot`: curves, pauses, stops and the rung cutoffs they missed,
from a finished experiment's log and from a running one's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tunecore
from tunecore import RunConfig, TuneConfig
from tunecore.api.plot import collect, render
from tunecore.cli import main
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.model import JsonDict, Resources
from tunecore.shell.eventlog import log_path, read_log

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    x = config["x"]
    assert isinstance(x, float)
    return {"loss": (x - 0.3) ** 2 + 1.0 / iteration}, 1.0 + x


def run(root: Path, name: str, scheduler: ASHAScheduler) -> Path:
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
    assert drawing.rungs[0] == (1.0, 20)  # every trial reached the first rung
    assert [m for m, _ in drawing.rungs] == [1.0, 3.0, 9.0, 27.0]


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
    assert '<img alt="learning curves" src="data:image/png;base64,iVBOR' in page.read_text()
    assert "20 trials drawn to" in capsys.readouterr().out


def test_the_cli_names_a_bad_out_flag(stopping: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plot", str(stopping), "--out", "curves.jpg"]) == 2
    assert "--out: 'curves.jpg' must end in .png or .html" in capsys.readouterr().err
