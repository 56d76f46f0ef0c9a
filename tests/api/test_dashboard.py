"""`tunecore dashboard`, driven as a user would in a real headless browser
(tests/api/browser.py): every page of a finished ASHA experiment, PBT's
lineage, a running experiment updating without a reload, and names from
the log shown as text, never run. Screenshots of each page are kept
(`browser.SCREENSHOTS`)."""

from __future__ import annotations

import json
import math
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tunecore
from tests.api.browser import browser, screenshot
from tests.api.test_plot import simulate_pbt
from tests.api.test_plot_page import simulate_asha
from tests.storage_fixtures import StorageTarget
from tunecore import Callback, RunConfig, TuneConfig, Tuner
from tunecore.api.dashboard import Dashboard, Follower
from tunecore.model import JsonDict, Resources

__all__ = ["browser"]  # a fixture, used by name

WAIT_MS = 60_000


@pytest.fixture(scope="module")
def asha(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulate_asha(tmp_path_factory.mktemp("dashboard"), "asha")


def serving(path: Path | str) -> Dashboard:
    dashboard = Dashboard(Follower(path, interval=0.2), port=0)
    dashboard.start()
    assert dashboard.follower.caught_up(WAIT_MS / 1000)
    return dashboard


@pytest.fixture
def asha_dashboard(asha: Path) -> Iterator[Dashboard]:
    dashboard = serving(asha)
    yield dashboard
    dashboard.close()


def api(dashboard: Dashboard, path: str) -> Any:
    with urllib.request.urlopen(dashboard.url + path.lstrip("/")) as response:
        return json.loads(response.read())


def read_whole_log(page: Any) -> None:
    """Wait until the page says the whole log was read."""
    page.wait_for_function(
        "() => ['finished', 'live'].includes(document.getElementById('live').textContent)",
        timeout=WAIT_MS,
    )


def open_tab(page: Any, tab: str) -> None:
    page.click(f'#tabs button[data-tab="{tab}"]')


def test_every_page_of_a_finished_asha_experiment(browser: Any, asha_dashboard: Dashboard) -> None:
    table = api(asha_dashboard, "/api/trials")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(asha_dashboard.url)
    read_whole_log(page)

    # Overview: the counts and the best trial.
    page.wait_for_selector("#best-trial")
    assert page.inner_text("#trial-count") == "24"
    best = min(row[5] for row in table["rows"] if row[5] is not None)
    assert f"{best:.5g}"[:5] in page.inner_text("#best-trial")
    assert page.locator("#best-chart path").count() == 1
    screenshot(page, "dashboard-overview")

    # Trials: 24 rows; sorted by best loss, both ways; filtered.
    open_tab(page, "trials")
    page.wait_for_selector("#trial-table tbody tr")
    assert page.inner_text("#table-count") == "24 of 24 trials"
    column = page.locator('th[data-column="best loss"]')
    column.click()
    firsts = page.locator("#trial-table tbody tr:first-child td")
    assert float(firsts.nth(4).inner_text()) == pytest.approx(best, rel=1e-4)
    column.click()
    worst = max(row[5] for row in table["rows"] if row[5] is not None)
    assert float(firsts.nth(4).inner_text()) == pytest.approx(worst, rel=1e-4)
    page.fill("#filter", "width=16")
    narrow = sum(1 for row in table["rows"] if row[7][table["params"].index("width")] == 16)
    assert page.inner_text("#table-count") == f"{narrow} of 24 trials"
    screenshot(page, "dashboard-trials")
    page.fill("#filter", "")

    # Curves: the 10 best drawn, the 5 best in colour, a tooltip on hover.
    open_tab(page, "curves")
    page.wait_for_selector("path.curve")
    assert page.locator("path.curve").count() == 10
    coloured = page.locator("path.curve.best")
    assert coloured.count() == 5
    top = coloured.last  # drawn last: the best
    start = top.get_attribute("d")
    assert start is not None
    x, y = (float(v) for v in start[1:].split("L")[0].split(" "))
    box = page.locator("#curve-chart svg").bounding_box()
    page.mouse.move(box["x"] + x, box["y"] + y)
    tip = page.locator("#curves .tooltip")
    tip.wait_for(state="visible")
    assert tip.get_attribute("data-trial") in table_ids(table)
    linear = page.locator("path.curve").first.get_attribute("d")
    page.check("#curve-log")
    page.wait_for_function(
        "(before) => document.querySelector('path.curve').getAttribute('d') !== before", arg=linear
    )
    screenshot(page, "dashboard-curves")

    # Decisions: a trial ASHA stopped at a rung, with the rung's cutoff.
    stopped = next(
        trial_id
        for trial_id in table_ids(table)
        if any(
            "cutoff" in m["why"]
            for m in api(asha_dashboard, f"/api/trial?id={trial_id}")["timeline"]
        )
    )
    open_tab(page, "decisions")
    page.wait_for_selector("#timeline li")
    page.select_option("#decision-trial", stopped)
    # the selected trial's timeline, not the one shown before its answer came
    reason = page.locator(f'#timeline[data-trial="{stopped}"] li[data-kind="stopped"] .why')
    reason.wait_for()
    assert "ASHA rung training_iteration" in reason.inner_text()
    assert "cutoff" in reason.inner_text()
    assert page.locator("#decision-rungs circle").count() >= 24
    assert page.locator("#decision-rungs line.cutoff").count() >= 1
    screenshot(page, "dashboard-decisions")

    # Parameters: each one's importance (|Spearman's rho| with the best
    # value), a line per trial with the metric, a dot per trial.
    open_tab(page, "params")
    page.wait_for_selector("polyline.parallel-line")
    bars = page.locator("rect.importance-bar")
    shown_importance = {
        bars.nth(i).get_attribute("data-param"): float(
            bars.nth(i).get_attribute("data-value") or ""
        )
        for i in range(bars.count())
    }
    scored = [row for row in table["rows"] if row[5] is not None]
    for index, name in enumerate(table["params"]):
        rho = pearson(ranks([row[7][index] for row in scored]), ranks([row[5] for row in scored]))
        assert shown_importance[name] == pytest.approx(abs(rho), abs=1e-9)
    assert page.locator("polyline.parallel-line").count() == 24
    assert page.locator("circle.scatter-dot").count() == 24
    screenshot(page, "dashboard-parameters")

    # What-if: HyperBand beside the recorded ASHA run.
    open_tab(page, "whatif")
    page.select_option("#whatif-scheduler", "hyperband")
    page.fill("#whatif-max_t", "27")
    page.click("#whatif-form button[type=submit]")
    page.wait_for_selector("#whatif-table", timeout=WAIT_MS)
    rows = page.locator("#whatif-table tbody tr")
    assert rows.first.locator("td").nth(1).inner_text() == "24"
    screenshot(page, "dashboard-whatif")
    page.close()


def ranks(values: list[float]) -> list[float]:
    """Each value's rank from 0, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            out[order[k]] = (start + end) / 2
        start = end + 1
    return out


def pearson(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx, syy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    return sxy / math.sqrt(sxx * syy)


def timeline(dashboard: Dashboard, trial_id: str) -> list[dict[str, Any]]:
    moments: list[dict[str, Any]] = api(dashboard, f"/api/trial?id={trial_id}")["timeline"]
    return moments


def table_ids(table: dict[str, Any]) -> list[str]:
    return [row[0] for row in table["rows"]]


def test_pbt_lineage_and_exploit_reasons(browser: Any, tmp_path: Path) -> None:
    simulate_pbt(tmp_path)
    dashboard = serving(tmp_path / "pbt")
    try:
        decisions = api(dashboard, "/api/decisions")
        assert decisions["lineage"], "the PBT run exploited"
        taker = decisions["lineage"][0]["trial"]
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(dashboard.url + "#tab=decisions")
        read_whole_log(page)
        page.wait_for_selector("#lineage line.exploit", state="attached")
        assert page.locator("#lineage line.exploit").count() == sum(
            1 for edge in decisions["lineage"] if edge["donor"]
        )
        page.select_option("#decision-trial", taker)
        timeline = f'#timeline[data-trial="{taker}"]'  # once the taker's answer came
        exploit = page.locator(f'{timeline} li[data-kind="exploited"] .why').first
        exploit.wait_for()
        assert "exploit: took the checkpoint and config of trial" in exploit.inner_text()
        assert "lr" in exploit.inner_text()
        screenshot(page, "dashboard-pbt-lineage")
        page.close()
    finally:
        dashboard.close()


GATE = threading.Semaphore(0)


def gated(config: JsonDict) -> None:
    """Reports three results, each only when the test lets it."""
    for step in range(3):
        assert GATE.acquire(timeout=120)
        x = config["x"]
        assert isinstance(x, float)
        tunecore.report({"loss": x / (step + 1)})


class Started(Callback):
    def __init__(self) -> None:
        self.first = threading.Event()

    def on_trial_start(self, iteration: int, trials: object, trial: object, **info: object) -> None:
        self.first.set()


def test_a_running_experiment_updates_without_a_reload(browser: Any, tmp_path: Path) -> None:
    started = Started()
    tuner = Tuner(
        gated,
        param_space={"x": tunecore.grid_search([1.0, 2.0, 3.0])},
        tune_config=TuneConfig(metric="loss", mode="min", max_concurrent_trials=1),
        run_config=RunConfig(
            name="live",
            storage_path=str(tmp_path),
            verbose=0,
            executor="in_process",
            callbacks=[started],
        ),
    )
    run = threading.Thread(target=tuner.fit)
    run.start()
    try:
        assert started.first.wait(120)
        dashboard = serving(tmp_path / "live")
        page = browser.new_page()
        page.goto(dashboard.url + "#tab=trials")
        page.wait_for_selector("#trial-table tbody tr")
        # One trial at a time (max_concurrent_trials=1): the next ones are created later.
        assert page.inner_text("#table-count") == "1 of 1 trials"
        GATE.release(2)  # the first trial reports twice
        page.wait_for_function(
            "() => [...document.querySelectorAll('#trial-table tbody tr td:nth-child(3)')]"
            ".some(td => td.textContent === '2')",
            timeout=WAIT_MS,
        )
        GATE.release(7)  # the rest: the first ends, the next trials start and end
        page.wait_for_function(
            "() => document.getElementById('table-count').textContent === '3 of 3 trials' && "
            "[...document.querySelectorAll('#trial-table tbody tr td:nth-child(2)')]"
            ".every(td => td.textContent === 'TERMINATED')",
            timeout=WAIT_MS,
        )
        page.wait_for_function(
            "() => document.getElementById('live').textContent === 'finished'", timeout=WAIT_MS
        )
        screenshot(page, "dashboard-live")
        page.close()
        dashboard.close()
    finally:
        GATE.release(9)
        run.join(120)


def shouts(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    """A trainable whose metric names and values are markup."""
    x = config["x"]
    assert isinstance(x, float)
    return {
        "<script>window.pwned=1</script>": iteration * x,
        'quote"s': math.nan,
    }, 1.0


def test_hostile_names_in_the_log_are_shown_as_text(browser: Any, tmp_path: Path) -> None:
    hostile = "<img src=x onerror=window.pwned=2>" + "A" * 30_000
    tunecore.simulate(
        shouts,
        param_space={"x": tunecore.grid_search([1.0, 2.0]), "note": hostile},
        tune_config=TuneConfig(metric="<script>window.pwned=1</script>", mode="max"),
        run_config=RunConfig(name="hostile", storage_path=str(tmp_path), verbose=0),
        cluster=Resources(cpu=2),
        max_iterations=3,
    )
    dashboard = serving(tmp_path / "hostile")
    try:
        page = browser.new_page()
        page.goto(dashboard.url)
        read_whole_log(page)
        page.wait_for_selector("#best-trial")
        for tab in ("overview", "trials", "curves", "decisions", "params"):
            open_tab(page, tab)
            page.wait_for_function(f"() => !document.getElementById('{tab}').hidden")
        open_tab(page, "trials")
        page.wait_for_selector("#trial-table th")
        headers = page.locator("#trial-table th").all_inner_texts()
        assert "best <script>window.pwned=1</script>" in " ".join(headers)
        assert page.evaluate("() => window.pwned") is None
        assert page.locator("img").count() == 0
        assert page.locator("script").count() == 1  # the page's own
        screenshot(page, "dashboard-hostile")
        page.close()
    finally:
        dashboard.close()


def test_requests_for_other_hosts_and_paths_are_refused(asha_dashboard: Dashboard) -> None:
    request = urllib.request.Request(asha_dashboard.url, headers={"Host": "evil.example:80"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert refused.value.code == 403
    for path in ("events.log", "../events.log", "api/../../etc/passwd", "%2e%2e/events.log"):
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(asha_dashboard.url + path)
        assert missing.value.code == 404
    with urllib.request.urlopen(asha_dashboard.url) as page:
        policy = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy


def test_a_what_if_naming_no_scheduler_says_which_field(asha_dashboard: Dashboard) -> None:
    request = urllib.request.Request(
        asha_dashboard.url + "api/whatif",
        data=json.dumps({"scheduler": "nope", "options": {}}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert refused.value.code == 400
    assert "scheduler='nope'" in json.loads(refused.value.read())["error"]


def quick(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    x = config["x"]
    assert isinstance(x, float)
    return {"loss": x / iteration}, 1.0


@pytest.mark.slow
def test_ten_thousand_trials_shown_and_sorted_best_first(browser: Any, tmp_path: Path) -> None:
    """A 10,000-trial experiment shows every trial and sorts all its rows by
    a metric column, the best trial first. (How fast is the benchmarks'
    business, not a test's: no timing is asserted here.)"""
    tunecore.simulate(
        quick,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=TuneConfig(num_samples=10_000, metric="loss", mode="min", seed=1),
        run_config=RunConfig(name="many", storage_path=str(tmp_path), verbose=0),
        cluster=Resources(cpu=8),
        max_iterations=2,
    )
    dashboard = serving(tmp_path / "many")
    try:
        page = browser.new_page()
        page.goto(dashboard.url + "#tab=trials")
        page.wait_for_function(
            "() => document.getElementById('table-count').textContent === '10000 of 10000 trials'",
            timeout=WAIT_MS,
        )
        page.locator('th[data-column="best loss"]').click()
        best = page.locator("#trial-table tbody tr:first-child td").nth(4).inner_text()
        rows = api(dashboard, "/api/trials")["rows"]
        assert float(best) == pytest.approx(min(row[5] for row in rows), rel=1e-4)
        screenshot(page, "dashboard-10k-trials")
        page.close()
    finally:
        dashboard.close()


def test_a_follower_that_has_read_nothing_yet_is_not_caught_up(asha: Path) -> None:
    """Before its first look at the log, the whole file is still to read
    (the version route reported it read, and a client stopped waiting)."""
    follower = Follower(asha)
    read, size = follower.progress()
    assert read < size == (asha / "events.log").stat().st_size
    follower.catch_up()
    assert follower.progress() == (size, size)


def test_the_command_serves_until_interrupted(asha: Path) -> None:
    """`tunecore dashboard DIR --port 0` prints where it serves, serves the
    experiment there, and ends cleanly on Ctrl-C."""
    command = [sys.executable, "-m", "tunecore.cli", "dashboard", str(asha), "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url is not None, line
        deadline = time.monotonic() + 120
        while True:  # until the log is read: the server answers at once, reads in the background
            with urllib.request.urlopen(url.group(0) + "api/version") as response:
                version = json.loads(response.read())
            if version["read"] >= version["size"] > 0 or time.monotonic() > deadline:
                break
            time.sleep(0.1)  # a polling interval; the loop ends on the condition
        assert version["done"] is True, version
        assert version["events"] > 24, version
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(120) == 0


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["dashboard", "/no/such/dir"], "/no/such/dir does not exist"),
        (["dashboard", ".", "--port", "70000"], "--port"),
    ],
)
def test_bad_arguments_are_named(
    arguments: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from tunecore.cli import main  # noqa: PLC0415 - the CLI, as the shell runs it

    code: object
    try:
        code = main(arguments)
    except SystemExit as ended:  # argparse's errors
        code = ended.code
    assert code not in (0, None)
    assert named in capsys.readouterr().err


def counted(config: JsonDict) -> None:
    for step in range(3):
        tunecore.report({"loss": 1.0 / (step + 1)})


@pytest.mark.slow
@pytest.mark.usefixtures("staging")
def test_an_experiment_in_s3_is_served_from_its_uri(s3_store: StorageTarget) -> None:
    tuner = Tuner(
        counted,
        param_space={"x": tunecore.grid_search([1, 2, 3])},
        tune_config=TuneConfig(metric="loss", mode="min"),
        run_config=RunConfig(
            name="stored", storage_path=s3_store.uri, verbose=0, executor="in_process"
        ),
    )
    tuner.fit()
    dashboard = serving(s3_store.experiment_uri("stored"))
    try:
        overview = api(dashboard, "/api/overview")
        assert overview["counts"] == {"TERMINATED": 3}
        assert overview["best"]["value"] == pytest.approx(1 / 3)
        assert len(api(dashboard, "/api/trials")["rows"]) == 3
    finally:
        dashboard.close()
