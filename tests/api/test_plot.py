"""`tunecore plot`: curves, pauses, stops and the rung cutoffs they missed,
from a finished experiment's log and from a running one's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from matplotlib import pyplot
from matplotlib.axis import Axis

import tunecore
from tests.storage_fixtures import StorageTarget
from tunecore import RunConfig, TuneConfig
from tunecore.api.plot import (
    best_label,
    collect,
    figure_of,
    render,
    render_what_if,
    what_if_figure,
)
from tunecore.api.whatif import what_if
from tunecore.cli import main
from tunecore.core.schedulers.asha import ASHAPromotionScheduler, ASHAScheduler
from tunecore.core.schedulers.hyperband import HyperBandScheduler, band_plan
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.model import JsonDict, Mode, Resources
from tunecore.shell.eventlog import log_path, read_log

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    x = config["x"]
    assert isinstance(x, float)
    return {"loss": (x - 0.3) ** 2 + 1.0 / iteration}, 1.0 + x


Runged = ASHAScheduler | ASHAPromotionScheduler | HyperBandScheduler


def simulate_into(storage_path: str, name: str, scheduler: Runged) -> None:
    """20 trials of `curve` under `scheduler`, kept at `storage_path` (a
    directory or a storage URI) as the experiment `name`."""
    tunecore.simulate(
        curve,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=TuneConfig(
            num_samples=20, metric="loss", mode="min", scheduler=scheduler, seed=2
        ),
        run_config=RunConfig(name=name, storage_path=storage_path, verbose=0),
        cluster=Resources(cpu=4),
    )


def run(root: Path, name: str, scheduler: Runged) -> Path:
    simulate_into(str(root), name, scheduler)
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
    scheduler = ASHAPromotionScheduler(max_t=9, grace_period=1, reduction_factor=3)
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
    text = page.read_text()
    assert '<script type="application/json" id="tunecore-plot-data">{"metric":"loss"' in text
    assert 'src="data:image/png;base64,iVBOR' in text  # the picture, below the chart
    assert "20 trials drawn to" in capsys.readouterr().out


def test_the_cli_names_a_bad_out_flag(stopping: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plot", str(stopping), "--out", "curves.jpg"]) == 2
    assert "--out: 'curves.jpg' must end in .png or .html" in capsys.readouterr().err


def grows_with_rate(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    rate = config["lr"]
    assert isinstance(rate, float)
    return {"score": iteration * rate}, 1.0


def simulate_pbt(storage: Path) -> None:
    """A simulated PBT experiment `storage / "pbt"` with exploits: four
    rates of growth, the fastest only ever a donor."""
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
        run_config=RunConfig(name="pbt", storage_path=str(storage), verbose=0),
        cluster=Resources(cpu=4),
        max_iterations=18,
    )


def test_pbt_exploits_are_drawn_from_taker_to_donor(tmp_path: Path) -> None:
    simulate_pbt(tmp_path)
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


def shown_ticks(axis: Axis) -> list[float]:
    """The ticks `axis` shows (within its view), once drawn."""
    low, high = axis.get_view_interval()
    return [float(t) for t in axis.get_ticklocs() if low <= t <= high]


def test_axes_that_count_trials_or_iterations_tick_whole_numbers(tmp_path: Path) -> None:
    short = run(tmp_path, "short", ASHAScheduler(max_t=3, grace_period=1, reduction_factor=3))
    figure = figure_of(collect(short))
    curves_panel, rungs_panel = figure.axes
    figure.canvas.draw()
    what_if_ = what_if_figure(what_if(short, ASHAScheduler(max_t=3, grace_period=1)))
    what_if_.canvas.draw()
    for axis in (curves_panel.xaxis, rungs_panel.yaxis, what_if_.axes[0].yaxis):
        ticks = shown_ticks(axis)
        assert len(ticks) >= 2
        assert all(tick.is_integer() for tick in ticks), ticks
    pyplot.close(figure)
    pyplot.close(what_if_)


def test_the_best_trials_are_named_in_colour_the_rest_thin_grey(stopping: Path) -> None:
    drawing = collect(stopping)
    last = {trial_id: c.ys[-1] for trial_id, c in drawing.curves.items()}
    best = drawing.best()
    assert best == sorted(last, key=last.__getitem__)[:5]  # min mode: the lowest last values
    figure = figure_of(drawing)
    panel = figure.axes[0]
    drawn_legend = panel.get_legend()
    assert drawn_legend is not None
    legend = [text.get_text() for text in drawn_legend.get_texts()]
    assert legend[:5] == [best_label(drawing, trial_id) for trial_id in best]
    top = drawing.curves[best[0]]
    assert legend[0] == f"{top.name} (loss {top.ys[-1]:.4g}): x={top.params['x']}"
    colours = {line.get_label(): line.get_color() for line in panel.get_lines()}
    assert len({colours[label] for label in legend[:5]}) == 5
    assert "0.6" not in {colours[label] for label in legend[:5]}
    grey = [line for line in panel.get_lines() if line.get_color() == "0.6"]
    assert len(grey) == len(drawing.curves) - 5  # one line each, none of the best
    pyplot.close(figure)


def test_another_metric_is_ranked_only_with_a_mode(stopping: Path, tmp_path: Path) -> None:
    assert collect(stopping).mode is Mode.MIN
    assert collect(stopping, metric="time_this_iter_s").best() == []
    for flags, ranked in (([], False), (["--mode", "max"], True)):
        page = tmp_path / "other.html"
        assert (
            main(
                ["plot", str(stopping), "--metric", "time_this_iter_s", "--out", str(page), *flags]
            )
            == 0
        )
        assert ('"rank":0' in page.read_text()) is ranked
    highest = collect(stopping, mode=Mode.MAX)
    last = {trial_id: c.ys[-1] for trial_id, c in highest.curves.items()}
    assert highest.best(3) == sorted(last, key=last.__getitem__, reverse=True)[:3]


def test_plot_never_writes_through_a_link_in_its_place(
    stopping: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("not a picture")
    planted = stopping / "curves.png"
    planted.unlink(missing_ok=True)
    planted.symlink_to(victim)
    chosen = tmp_path / "page.html"
    chosen.symlink_to(victim)
    assert main(["plot", str(stopping)]) == 0
    assert main(["plot", str(stopping), "--out", str(chosen)]) == 0
    assert victim.read_text() == "not a picture"
    for written in (planted, chosen):  # the link replaced by the picture, not followed
        assert not written.is_symlink()
    assert planted.read_bytes().startswith(PNG_MAGIC)
    assert chosen.read_text().startswith("<!doctype html>")


def test_an_unwritable_out_is_an_error_naming_the_flag(
    stopping: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no such dir" / "curves.png"
    assert main(["plot", str(stopping), "--out", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"tunecore plot: error: --out {missing}: cannot write a file there "
        f"({missing.parent} does not exist)\n"
    )


def test_plot_of_a_uri_draws_into_the_current_directory_a_file_that_stays(
    file_store: StorageTarget, tmp_path: Path
) -> None:
    simulate_into(file_store.uri, "stored", ASHAScheduler(max_t=9, grace_period=1))
    here = tmp_path / "here"
    here.mkdir()
    source = Path(tunecore.__file__).parents[1]
    done = subprocess.run(
        [sys.executable, "-m", "tunecore.cli", "plot", file_store.experiment_uri("stored")],
        cwd=here,
        env={**os.environ, "PYTHONPATH": str(source)},
        capture_output=True,
        text=True,
        check=True,
    )
    written = here / "stored-curves.png"
    assert done.stdout == f"{file_store.experiment_uri('stored')}: 20 trials drawn to {written}\n"
    assert written.read_bytes().startswith(PNG_MAGIC)  # after the command ended


def test_the_picture_has_the_permissions_of_any_new_file_of_the_user(
    stopping: Path, tmp_path: Path
) -> None:
    before = os.umask(0o027)
    try:
        assert main(["plot", str(stopping), "--out", str(tmp_path / "mine.png")]) == 0
    finally:
        os.umask(before)
    assert (tmp_path / "mine.png").stat().st_mode & 0o777 == 0o640  # 0o666 less the umask
