"""A real headless Chromium driven through Playwright, for pages a server
serves (the dashboard): Playwright drives the system's Chromium
(`headless.CHROMIUM`), so nothing is downloaded. Skipped, saying why,
where either is missing, unless TUNECORE_REQUIRE_BROWSER=1 (as CI sets
it) makes that a failure.

Screenshots go to `SCREENSHOTS` (build/screenshots, or
$TUNECORE_SCREENSHOTS), kept after the run as the tests' artifacts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.headless import CHROMIUM, REQUIRED

SCREENSHOTS = Path(
    os.environ.get("TUNECORE_SCREENSHOTS", Path(__file__).parents[2] / "build" / "screenshots")
)


def _playwright() -> Any:
    try:
        from playwright.sync_api import sync_playwright  # noqa: PLC0415 - a test extra
    except ImportError:
        if REQUIRED:
            pytest.fail("TUNECORE_REQUIRE_BROWSER=1 but playwright is not installed")
        pytest.skip(
            "playwright is not installed (pip install playwright): the page is driven by it"
        )
    if CHROMIUM is None:
        if REQUIRED:
            pytest.fail("TUNECORE_REQUIRE_BROWSER=1 but chromium is not installed")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, headless, for the module's tests."""
    with _playwright()() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


def screenshot(page: Any, name: str) -> Path:
    """The whole page as `SCREENSHOTS/name.png`."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    out = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(out), full_page=True)
    return out
