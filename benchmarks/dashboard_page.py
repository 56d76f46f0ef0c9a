"""`tunecore dashboard` at 1,000 to 100,000 trials: how long the server
takes to read the log, how soon the trials page shows every row, how long
sorting all of them takes, and how fast each JSON route answers.

    python -m benchmarks dashboard_page [--quick] [--sizes 1000,10000] [--sweeps fifo,asha]

Each experiment is simulated (`tunecore.simulate`):

- `fifo`: N trials of two reports each (`loss` = x / iteration, 8
  virtual CPUs), as the dashboard's 10,000-trial test builds it;
- `asha`: `benchmarks.scale_reads`' ASHA sweep: N trials of a learning
  curve (`loss`) up to 100 iterations under ASHA, grace 1, reduction
  factor 4, 16 virtual CPUs.

Each (sweep, size) runs in a fresh interpreter (`--measure SWEEP N`): it
builds the experiment (untimed), serves it (`Dashboard` on a free port)
and measures

- the log's read: from the server's start to its follower caught up
  (wall and CPU seconds of the process; nothing else runs in it then);
- the first page: the system's Chromium (through Playwright, as the
  dashboard's tests drive it; nothing is downloaded) opens
  `#tab=trials`, and the time is the page's own clock
  (`performance.now()`, from the navigation's start) at the first frame
  whose table counts every trial ("10000 of 10000 trials"), the median of
  `REPEATS` fresh pages;
- the sort: a click on the `best loss` column, to the next frame after
  the table was redrawn, all rows sorted (the median of `REPEATS` clicks,
  each reversing the order; the first is checked to put the best trial
  first);
- each JSON route: the median of `ROUTE_REPEATS` GETs, with its size.

The targets, at 10,000 trials: the first page under 2 s, the sort under
1 s. Without Chromium or Playwright the browser's part is skipped, saying
so, and its targets are "not measured"; the rest still runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks import scale_reads
from benchmarks.children import emit, peak_rss_kib, run_child
from benchmarks.command_line import exit_status, trial_counts
from benchmarks.scale_reads import per_trial_ratio, verdict
from benchmarks.scratch import run_dir

FIFO = "fifo"
ASHA = "asha"
SWEEPS = (FIFO, ASHA)
METRIC = "loss"
REPEATS = 3
ROUTE_REPEATS = 5
CHILD_TIMEOUT_S = 3600.0
WAIT_MS = 600_000

TARGET_TRIALS = 10_000
FIRST_PAGE_TARGET_S = 2.0
SORT_TARGET_S = 1.0

LOG_READ = "log read (wall s)"
LOG_READ_CPU = "log read (CPU s)"
FIRST_PAGE = "first page, all rows (s)"
SORT = "sort all rows (s)"
ROUTES = (
    "/api/version",
    "/api/overview",
    "/api/trials",
    "/api/decisions",
    "/api/curves",
    "/api/trial",
)
MEASURES = (LOG_READ, LOG_READ_CPU, FIRST_PAGE, SORT, *(f"GET {r} (ms)" for r in ROUTES))

TARGETS = {
    FIRST_PAGE: "the page open to all {trials:,} rows shown, {sweep}, < {target:g} s",
    SORT: "sorting all {trials:,} rows by a metric, {sweep}, < {target:g} s",
}

Cell = dict[str, Any] | str
Results = dict[tuple[str, int], Cell]
"""(sweep, trials) -> the child's measurements, or what went wrong."""


# -- the child ------------------------------------------------------------------------------


def falling(config: Mapping[str, Any], iteration: int) -> tuple[dict[str, Any], float]:
    """The FIFO sweep's simulated trainable: a loss falling with each report."""
    return {METRIC: float(config["x"]) / iteration}, 1.0


def build(sweep: str, trials: int, storage: Path) -> Path:
    """Simulate the sweep's experiment under `storage`; its directory."""
    import tunecore  # noqa: PLC0415 - the child imports what it measures
    from tunecore.model import Resources  # noqa: PLC0415

    run_config = tunecore.RunConfig(name=sweep, storage_path=str(storage), verbose=0)
    if sweep == FIFO:
        tunecore.simulate(
            falling,
            param_space={"x": tunecore.uniform(0.0, 1.0)},
            tune_config=tunecore.TuneConfig(num_samples=trials, metric=METRIC, mode="min", seed=1),
            run_config=run_config,
            cluster=Resources(cpu=8),
            max_iterations=2,
        )
    elif sweep == ASHA:
        scale_reads.build(ASHA, trials, storage / sweep)
    else:
        raise ValueError(f"sweep {sweep!r}: not one of {', '.join(SWEEPS)}")
    return storage / sweep


def measure(sweep: str, trials: int) -> dict[str, Any]:
    """Build, serve and measure one experiment (see the module's docstring)."""
    from tunecore.api.dashboard import Dashboard, Follower  # noqa: PLC0415

    directory = build(sweep, trials, Path(run_dir("bench-dashboard-")))
    out: dict[str, Any] = {"log_bytes": (directory / "events.log").stat().st_size}
    dashboard = Dashboard(Follower(directory, interval=0.2), port=0)
    try:
        cpu, wall = time.process_time(), time.perf_counter()
        dashboard.start()
        if not dashboard.follower.caught_up(WAIT_MS / 1000):
            raise RuntimeError(f"the log was not read in {WAIT_MS / 1000:.0f} s")
        out[LOG_READ] = time.perf_counter() - wall
        out[LOG_READ_CPU] = time.process_time() - cpu
        table = _get(dashboard.url, "/api/trials")[0]
        if len(table["rows"]) != trials:
            raise RuntimeError(f"/api/trials has {len(table['rows'])} rows, not {trials}")
        out.update(route_times(dashboard.url, table))
        missing = browser_missing()
        if missing is None:
            out.update(page_times(dashboard.url, table))
        else:
            out["browser"] = missing
    finally:
        dashboard.close()
    out["peak_rss_kb"] = peak_rss_kib()
    return out


def _get(url: str, route: str) -> tuple[Any, int, float]:
    """(the route's JSON, its size in bytes, the seconds the GET took)."""
    started = time.perf_counter()
    with urllib.request.urlopen(url + route.lstrip("/")) as response:
        body = response.read()
    took = time.perf_counter() - started
    return json.loads(body), len(body), took


def route_times(url: str, table: Mapping[str, Any]) -> dict[str, Any]:
    """Each route's median response time (ms) and size (bytes): the curves
    of the first ten trials, the first trial's own page."""
    ids = [row[0] for row in table["rows"]]
    queries = {
        "/api/curves": f"/api/curves?trials={','.join(ids[:10])}&y={METRIC}",
        "/api/trial": f"/api/trial?id={ids[0]}",
    }
    out: dict[str, Any] = {}
    for route in ROUTES:
        times, size = [], 0
        for _ in range(ROUTE_REPEATS):
            _, size, took = _get(url, queries.get(route, route))
            times.append(took)
        out[f"GET {route} (ms)"] = 1000 * statistics.median(times)
        out[f"GET {route} (bytes)"] = size
    return out


def browser_missing() -> str | None:
    """Why the page cannot be opened here (no Playwright, no Chromium), or None."""
    try:
        import playwright.sync_api  # noqa: F401, PLC0415 - in the bench extra
    except ImportError:
        return "playwright is not installed (pip install -e '.[bench]')"
    if _chromium() is None:
        return "chromium is not installed (apt-get install chromium)"
    return None


def _chromium() -> str | None:
    """The system's Chromium, which Playwright drives (it downloads none)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


ALL_ROWS_SHOWN = """(count) => {
  const shown = document.getElementById('table-count').textContent;
  return shown === `${count} of ${count} trials` ? performance.now() : false;
}"""
"""The page's clock (ms from the navigation's start) once every row is counted."""

SORT_CLICK = """async (column) => {
  const started = performance.now();
  document.querySelector(`th[data-column="${column}"]`).click();
  await new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)));
  return performance.now() - started;
}"""
"""A click on a column's heading, to the frame after the table's redraw (ms)."""

BEST_CELL = "#trial-table tbody tr:first-child td:nth-child(5)"
"""The first row's `best loss` cell (the fifth column: trial, status, iter, last, best)."""


def page_times(url: str, table: Mapping[str, Any]) -> dict[str, Any]:
    """The first page's and the sort's medians (seconds), in headless
    Chromium; the first sort checked to put the best trial first."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - in the bench extra

    count = len(table["rows"])
    best = min(row[5] for row in table["rows"] if row[5] is not None)
    firsts: list[float] = []
    sorts: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            for _ in range(REPEATS):
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(url + "#tab=trials")
                shown = page.wait_for_function(
                    ALL_ROWS_SHOWN, arg=count, polling="raf", timeout=WAIT_MS
                )
                firsts.append(float(shown.json_value()) / 1000)
                if len(firsts) < REPEATS:
                    page.close()
            for click in range(REPEATS):
                sorts.append(float(page.evaluate(SORT_CLICK, f"best {METRIC}")) / 1000)
                if click == 0:
                    first = float(page.inner_text(BEST_CELL))
                    if abs(first - best) > 1e-4 * abs(best):
                        raise RuntimeError(f"sorted by best {METRIC}: first {first}, not {best}")
        finally:
            browser.close()
    return {FIRST_PAGE: statistics.median(firsts), SORT: statistics.median(sorts)}


# -- the parent -----------------------------------------------------------------------------


def run(sizes: Sequence[int], sweeps: Sequence[str] = SWEEPS) -> tuple[str, bool, list[str]]:
    """Measure every sweep at every size, each in a child; (the Markdown
    report, whether every run passed and every measured target was met,
    the target lines)."""
    missing = browser_missing()
    if missing is not None:
        print(f"dashboard_page: {missing}: the page is not opened", file=sys.stderr)
    results: Results = {}
    for sweep in sweeps:
        for trials in sizes:
            print(f"dashboard on {sweep} {trials:,} ...", file=sys.stderr, flush=True)
            child = run_child(
                "benchmarks.dashboard_page",
                ["--measure", sweep, str(trials)],
                CHILD_TIMEOUT_S,
            )
            results[sweep, trials] = child.data if child.data is not None else str(child.problem)
    return report(sizes, results, missing)


def shown(cell: Cell | None, measure: str) -> str:
    """One cell of the table: the measure, FAILED, or `-` (not measured)."""
    if isinstance(cell, str):
        return "FAILED"
    if cell is None or measure not in cell:
        return "-"
    value = float(cell[measure])
    if measure.endswith("(ms)"):
        size = cell[measure.replace("(ms)", "(bytes)")]
        return f"{value:.1f} ({size / 1024:,.0f} KiB)"
    return f"{value:.3f}"


def ratio(cells: Mapping[int, Cell], measure: str) -> str:
    """The measure per trial at the largest size over the smallest's."""
    measured = {n: c for n, c in cells.items() if isinstance(c, dict) and measure in c}
    value = per_trial_ratio(measured, measure)
    return "-" if value is None else f"{value:.2f}x"


def report(
    sizes: Sequence[int], results: Results, missing: str | None
) -> tuple[str, bool, list[str]]:
    lines = [
        "### The dashboard at " + ", ".join(f"{n:,}" for n in sizes) + " trials",
        "",
        "Simulated experiments served by `tunecore dashboard`; the page in headless "
        "Chromium. Medians; a route's time with its size.",
        "",
        "| measure | sweep | "
        + " | ".join(f"{n:,} trials" for n in sizes)
        + " | per trial, largest / smallest |",
        "|---|---|" + "---:|" * (len(sizes) + 1),
    ]
    sweeps = [sweep for sweep in SWEEPS if any(s == sweep for s, _ in results)]
    for measure in MEASURES:
        for sweep in sweeps:
            cells = {n: results[sweep, n] for n in sizes if (sweep, n) in results}
            lines.append(
                f"| {measure} | {sweep} | "
                + " | ".join(shown(cells.get(n), measure) for n in sizes)
                + f" | {ratio(cells, measure)} |"
            )
    targets, failed = target_lines(results)
    lines += ["", f"Targets (at {TARGET_TRIALS:,} trials):", "", *targets]
    if missing is not None:
        lines += ["", f"The page was not opened: {missing}."]
    problems = [
        f"- {sweep} {n:,}: {cell}" for (sweep, n), cell in results.items() if isinstance(cell, str)
    ]
    if problems:
        lines += ["", "Failures:", "", *problems]
    return "\n".join(lines), not problems and not failed, targets


def target_lines(results: Results) -> tuple[list[str], bool]:
    """One line per target and sweep, judged at `TARGET_TRIALS` (not
    measured when that size was not run, or the page not opened); and
    whether any measured target was not met."""
    lines: list[str] = []
    failed = False
    sweeps = [sweep for sweep in SWEEPS if any(s == sweep for s, _ in results)]
    for measure, target in ((FIRST_PAGE, FIRST_PAGE_TARGET_S), (SORT, SORT_TARGET_S)):
        for sweep in sweeps:
            cell = results.get((sweep, TARGET_TRIALS))
            seconds = float(cell[measure]) if isinstance(cell, dict) and measure in cell else None
            ok = None if seconds is None else seconds < target
            failed = failed or ok is False
            value = "-" if seconds is None else f"{seconds:.2f} s"
            label = TARGETS[measure].format(trials=TARGET_TRIALS, sweep=sweep, target=target)
            lines.append(f"- {label}: {value} ({verdict(ok)})")
    return lines, failed


def main(argv: Sequence[str]) -> int:
    return exit_status(measure_from(argv))


def measure_from(argv: Sequence[str]) -> tuple[str, bool, list[str]] | None:
    """Do what the command line asks: a child's one measurement (None), or
    the whole run (what `run` returns)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks dashboard_page", description=__doc__
    )
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 trials, a smoke run")
    parser.add_argument("--sizes", type=trial_counts, default=(1_000, TARGET_TRIALS))
    parser.add_argument(
        "--sweeps", type=sweep_names, default=SWEEPS, help=f"of {', '.join(SWEEPS)}"
    )
    parser.add_argument("--measure", nargs=2, metavar=("SWEEP", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv))
    if args.measure is not None:
        sweep, trials = args.measure
        emit(measure(sweep, int(trials)))
        return None
    return run((100, 1_000) if args.quick else args.sizes, args.sweeps)


def sweep_names(text: str) -> tuple[str, ...]:
    """An argparse type: comma-separated sweeps, each one of `SWEEPS`."""
    names = tuple(name for name in text.split(",") if name)
    unknown = [name for name in names if name not in SWEEPS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{text!r}: sweeps are {', '.join(SWEEPS)}")
    return names


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
