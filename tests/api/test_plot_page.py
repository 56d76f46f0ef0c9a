"""`tunecore plot --out FILE.html`: an interactive page, checked in a real
headless browser (tests/api/headless.py): one curve per trial, the best
in colour, a tooltip under the mouse, the log scale, a click in the list
highlighting a trial; and names from the log shown as text, never run."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

import tunecore
from tests.api.headless import driven, needs_chromium, probe, screenshot
from tests.api.test_plot import simulate_pbt
from tunecore import RunConfig, TuneConfig
from tunecore.api.plot import collect, page_data
from tunecore.api.plot_page import script_json
from tunecore.cli import main
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.model import JsonDict, Resources

PAGE_ASSETS = Path(tunecore.__file__).parent / "api"


def learning(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    """A curve that falls to a floor set by how far `lr` is from 0.03, the
    faster the larger `lr` is."""
    lr, width = config["lr"], config["width"]
    assert isinstance(lr, float)
    assert isinstance(width, int)
    floor = 0.05 + 0.4 * abs(math.log10(lr / 0.03))
    return {"loss": floor + 2.0 * math.exp(-iteration * lr * 3) / (1 + width / 64)}, 1.0


def simulate_asha(root: Path, name: str) -> Path:
    """24 trials of `learning` under ASHA, simulated into `root / name`."""
    tunecore.simulate(
        learning,
        param_space={
            "lr": tunecore.loguniform(1e-3, 0.3),
            "width": tunecore.choice([16, 32, 64, 128]),
        },
        tune_config=TuneConfig(
            num_samples=24,
            metric="loss",
            mode="min",
            scheduler=ASHAScheduler(max_t=27, grace_period=1, reduction_factor=3),
            seed=5,
        ),
        run_config=RunConfig(name=name, storage_path=str(root), verbose=0),
        cluster=Resources(cpu=4),
    )
    return root / name


@pytest.fixture(scope="module")
def experiment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulate_asha(tmp_path_factory.mktemp("page"), "page")


DRIVE = """
const svg = document.querySelector('#tunecore-plot svg');
const data = JSON.parse(document.getElementById('tunecore-plot-data').textContent);
const curves = () => [...svg.querySelectorAll('path.curve')];
const seen = {};
seen.ids = curves().map(p => p.dataset.trial);
seen.best = curves().filter(p => p.classList.contains('best'))
  .map(p => [p.dataset.trial, p.getAttribute('stroke')]);
seen.legend = [...document.querySelectorAll('.legend li')].map(li => li.dataset.trial);
// The mouse on the last point of the best curve, then far from any point.
const top = data.trials.find(t => t.rank === 0);
const d = svg.querySelector(`path.curve[data-trial="${top.id}"]`).getAttribute('d');
const [x, y] = d.slice(1).split('L').pop().split(' ').map(Number);
const box = svg.getBoundingClientRect();
const move = (cx, cy) => svg.dispatchEvent(new MouseEvent('mousemove', {clientX: cx, clientY: cy}));
move(box.left + x, box.top + y);
const tip = document.querySelector('.tooltip');
seen.hover = {hidden: tip.hidden, trial: tip.dataset.trial,
  lines: [...tip.children].map(line => line.textContent)};
move(box.left + 1, box.top + 1);
seen.away = tip.hidden;
const yTicks = () => [...svg.querySelectorAll('text.tick.y')].map(t => t.textContent);
const xTicks = () => [...svg.querySelectorAll('text.tick.x')].map(t => t.textContent);
seen.linear = {scale: svg.dataset.scale, y: yTicks(), x: xTicks()};
document.getElementById('log-scale').click();
seen.log = {scale: svg.dataset.scale, y: yTicks(), curves: curves().length};
// A click on a grey trial in the list highlights it; a second lets go.
const grey = data.trials.filter(t => t.rank === null && t.xs.length).pop();
const entry = document.querySelector(`.legend li[data-trial="${grey.id}"]`);
entry.click();
seen.picked = {trial: grey.id, entry: entry.classList.contains('picked'),
  picked: curves().filter(p => p.classList.contains('picked')).map(p => p.dataset.trial),
  dimmed: curves().filter(p => p.classList.contains('dimmed')).length};
entry.click();
seen.released = curves().filter(p => p.matches('.picked, .dimmed')).length;
return seen;
"""


@needs_chromium
def test_the_page_draws_a_curve_per_trial_and_answers_the_mouse(
    experiment: Path, tmp_path: Path
) -> None:
    page = tmp_path / "curves.html"
    assert main(["plot", str(experiment), "--out", str(page)]) == 0
    drawing = collect(experiment)
    seen: dict[str, Any] = probe(page, DRIVE, tmp_path)

    assert sorted(seen["ids"]) == sorted(drawing.curves)  # one path per trial
    best = drawing.best()
    assert len(best) == 5
    assert [trial for trial, _ in seen["best"]] == best[::-1]  # the best drawn last, on top
    assert len({colour for _, colour in seen["best"]}) == 5
    assert seen["legend"][:5] == best

    top = drawing.curves[best[0]]
    assert seen["hover"]["hidden"] is False
    assert seen["hover"]["trial"] == best[0]
    assert seen["hover"]["lines"] == [
        top.name,
        f"training_iteration: {int(top.xs[-1])}",
        f"loss: {float(f'{top.ys[-1]:.4g}')}",
        *(f"{key} = {value}" for key, value in top.params.items()),
    ]
    assert list(top.params) == ["lr", "width"]
    assert seen["away"] is True

    assert seen["linear"]["scale"] == "linear"
    assert all(re.fullmatch(r"\d+", tick) for tick in seen["linear"]["x"])  # iterations
    assert seen["log"]["scale"] == "log"
    assert seen["log"]["y"] != seen["linear"]["y"]
    assert seen["log"]["curves"] == len(drawing.curves)

    picked = seen["picked"]
    assert picked["entry"] is True
    assert picked["picked"] == [picked["trial"]]
    assert picked["dimmed"] == len(drawing.curves) - 1
    assert seen["released"] == 0

    shot = screenshot(driven(page, SHOW, tmp_path), tmp_path / "curves-page.png", tmp_path)
    assert shot.stat().st_size > 30_000  # a drawn chart, not a blank page


SHOW = """
const svg = document.querySelector('#tunecore-plot svg');
const data = JSON.parse(document.getElementById('tunecore-plot-data').textContent);
const grey = data.trials.filter(t => t.rank === null && t.xs.length > 3).pop();
document.querySelector(`.legend li[data-trial="${grey.id}"]`).click();
const top = data.trials.find(t => t.rank === 0);
const d = svg.querySelector(`path.curve[data-trial="${top.id}"]`).getAttribute('d');
const points = d.slice(1).split('L');
const [x, y] = points[Math.floor(points.length / 3)].split(' ').map(Number);
const box = svg.getBoundingClientRect();
svg.dispatchEvent(new MouseEvent('mousemove', {clientX: box.left + x, clientY: box.top + y}));
return null;
"""


PWNED = "window.tunecorePwned"
HOSTILE_METRIC = f"</title></script><script>{PWNED}=1</script><!--"
HOSTILE_ENV = [f"<img src=x onerror={PWNED}=2>", "\"quote' & <b>bold</b> " + "long" * 2000]
HOSTILE_KEY = '<svg onload="' + PWNED + '=3">'
HOSTILE_ERROR = f"<script>{PWNED}=4</script>"


def hostile(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    fails = config[HOSTILE_KEY] == "fails"
    if fails and iteration == 2:
        raise ValueError(HOSTILE_ERROR)
    env = config["env"]
    assert isinstance(env, str)
    return {HOSTILE_METRIC: len(env) / 1000 + 1.0 / iteration + fails * len(env) / 100}, 1.0


FIND_INJECTED = f"""
const legend = [...document.querySelectorAll('.legend li')];
const svg = document.querySelector('#tunecore-plot svg');
const failed = JSON.parse(document.getElementById('tunecore-plot-data').textContent)
  .trials.find(t => t.error);
const d = svg.querySelector(`path.curve[data-trial="${{failed.id}}"]`).getAttribute('d');
const [x, y] = d.slice(1).split('L').pop().split(' ').map(Number);
const box = svg.getBoundingClientRect();
svg.dispatchEvent(new MouseEvent('mousemove', {{clientX: box.left + x, clientY: box.top + y}}));
return {{
  pwned: typeof {PWNED},
  title: document.title,
  h1: document.querySelector('h1').textContent,
  yLabel: [...svg.querySelectorAll('text.label')].map(t => t.textContent),
  names: legend.map(li => li.querySelector('.name').textContent),
  params: legend.map(li => li.querySelector('.params').textContent),
  tooltip: [...document.querySelector('.tooltip').children].map(line => line.textContent),
  scripts: document.scripts.length,
  images: document.images.length,
  injected: document.querySelectorAll('b, svg svg, img[onerror], [onload]').length,
}};
"""


@needs_chromium
def test_names_from_the_log_are_shown_as_text_never_run(tmp_path: Path) -> None:
    tunecore.simulate(
        hostile,
        param_space={
            "env": tunecore.grid_search(HOSTILE_ENV),
            HOSTILE_KEY: tunecore.grid_search(["fails", "</script>"]),
        },
        tune_config=TuneConfig(metric=HOSTILE_METRIC, mode="min", seed=1),
        run_config=RunConfig(name="hostile", storage_path=str(tmp_path), verbose=0),
        cluster=Resources(cpu=4),
        max_iterations=4,
    )
    page = tmp_path / "hostile.html"
    assert main(["plot", str(tmp_path / "hostile"), "--out", str(page)]) == 0
    text = page.read_text()
    json_block = text.split('type="application/json" id="tunecore-plot-data">')[1]
    assert json_block.index("</script>") == json_block.index("</script>\n<script>")  # its own
    assert "<!--" not in json_block.split("</script>")[0]

    seen = probe(page, FIND_INJECTED, tmp_path)
    assert seen["pwned"] == "undefined"
    assert seen["injected"] == 0
    assert seen["scripts"] == 3  # the data, the page's script, the test's probe
    assert seen["images"] == 1  # the picture below the chart
    title = f"{HOSTILE_METRIC} per training_iteration: 4 trials"
    assert seen["title"] == seen["h1"] == title
    assert seen["yLabel"] == ["training_iteration", HOSTILE_METRIC]
    drawing = collect(tmp_path / "hostile")
    assert sorted(seen["names"]) == sorted(curve.name for curve in drawing.curves.values())
    for env in HOSTILE_ENV:  # a trial's name holds its `env`, its '/' made '_' (as in Ray)
        assert sum(env.replace("/", "_") in name for name in seen["names"]) == 2
    for params in seen["params"]:
        assert f"{HOSTILE_KEY}=" in params
        assert any(f"env={env}" in params for env in HOSTILE_ENV)
    assert f"error: ValueError: {HOSTILE_ERROR}" in seen["tooltip"]
    screenshot(page, tmp_path / "hostile-page.png", tmp_path)

    what_if_page = tmp_path / "what-if.html"
    source = str(tmp_path / "hostile")
    command = ["simulate", "--from", source, "--scheduler", "fifo", "--plot", str(what_if_page)]
    assert main(command) == 0
    seen = probe(what_if_page, PICTURE_PAGE, tmp_path)
    assert seen == {
        "pwned": "undefined",
        "title": f"what-if: {HOSTILE_METRIC}",
        "elements": ["HTML", "HEAD", "META", "TITLE", "STYLE", "BODY", "H1", "IMG", "SCRIPT"],
        "alt": f"what-if: {HOSTILE_METRIC}",
    }


PICTURE_PAGE = f"""
return {{
  pwned: typeof {PWNED},
  title: document.title,
  elements: [...document.querySelectorAll('*')].map(e => e.tagName),
  alt: document.images[0].alt,
}};
"""


def test_the_page_needs_no_network_and_its_assets_cannot_end_their_element(
    experiment: Path, tmp_path: Path
) -> None:
    page = tmp_path / "offline.html"
    assert main(["plot", str(experiment), "--out", str(page)]) == 0
    text = page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)|<link|@import|url\(""", text)
    assert re.findall(r"<script[^>]*>", text) == [
        '<script type="application/json" id="tunecore-plot-data">',
        "<script>",
    ]
    for asset in ("plot_page.js", "plot_page.css"):
        inlined = (PAGE_ASSETS / asset).read_text()
        assert inlined in text
        for opening in ("</", "<!--", "<script"):  # ends or nests its element
            assert opening not in inlined


def test_the_json_block_escapes_what_could_end_it() -> None:
    text = script_json({"m": "</script><!--&", "k": ["<>"]})
    assert not set("<>&") & set(text)
    assert text == ('{"m":"\\u003c/script\\u003e\\u003c!--\\u0026","k":["\\u003c\\u003e"]}')


def test_the_page_data_names_each_trial_and_ranks_the_best(experiment: Path) -> None:
    drawing = collect(experiment)
    data = page_data(drawing)
    ranked = sorted((t for t in data["trials"] if t["rank"] is not None), key=lambda t: t["rank"])
    assert [t["id"] for t in ranked] == drawing.best()
    lasts = [t["ys"][-1] for t in ranked]
    assert lasts == sorted(lasts)  # min mode: lowest first
    others = [t["ys"][-1] for t in data["trials"] if t["rank"] is None]
    assert min(others) >= lasts[-1]
    assert {t["end"] for t in data["trials"]} == {"stopped", "ended"}


def test_the_page_assets_ship_with_the_package() -> None:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    shipped = project["tool"]["setuptools"]["package-data"]["tunecore"]
    assets = sorted(p.name for p in PAGE_ASSETS.glob("plot_page.*") if p.suffix != ".py")
    assert assets == ["plot_page.css", "plot_page.js"]
    assert {f"api/{name}" for name in assets} <= set(shipped)


@needs_chromium
def test_a_metric_not_reported_yet_is_said_on_the_page(experiment: Path, tmp_path: Path) -> None:
    page = tmp_path / "nothing.html"
    assert main(["plot", str(experiment), "--metric", "accuracy", "--out", str(page)]) == 0
    seen = probe(
        page,
        "const svg = document.querySelector('#tunecore-plot svg');"
        "return {texts: [...svg.querySelectorAll('text')].map(t => t.textContent),"
        " curves: svg.querySelectorAll('path.curve').length,"
        " log: document.getElementById('log-scale').disabled};",
        tmp_path,
    )
    assert seen == {"texts": ["no accuracy reported yet"], "curves": 0, "log": True}


@needs_chromium
def test_a_pbt_exploit_breaks_the_curve_joined_by_a_dotted_line(tmp_path: Path) -> None:
    simulate_pbt(tmp_path)
    page = tmp_path / "pbt.html"
    assert main(["plot", str(tmp_path / "pbt"), "--out", str(page)]) == 0
    seen = probe(
        page,
        "const svg = document.querySelector('#tunecore-plot svg');"
        "return {moves: Object.fromEntries([...svg.querySelectorAll('path.curve')]"
        "  .map(p => [p.dataset.trial, p.getAttribute('d').split('M').length - 1])),"
        " dotted: svg.querySelectorAll('line.exploit').length,"
        " key: document.querySelector('.key').textContent};",
        tmp_path,
    )
    drawing = collect(tmp_path / "pbt")
    assert seen["moves"] == {t: 1 + len(c.exploited_at) for t, c in drawing.curves.items()}
    assert seen["dotted"] == len(drawing.exploits) > 0
    assert "PBT exploit" in seen["key"]
    screenshot(page, tmp_path / "pbt-page.png", tmp_path)
