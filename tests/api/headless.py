"""Chromium, headless, the browser the tests open tunecore's HTML pages in
(Debian's `chromium` package; the tests that need it are skipped, saying
so, where it is not installed, unless TUNECORE_REQUIRE_BROWSER=1, as CI
sets it, makes a missing browser a failure).

A page is checked as a user would meet it: opened from its file, its
scripts run, and then either its DOM read back (`probe`: a script
appended to a copy of the page runs after the page's own, drives it with
real DOM events and leaves what it saw as JSON in the DOM) or its
screenshot taken."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)

REQUIRED = os.environ.get("TUNECORE_REQUIRE_BROWSER") == "1"

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not REQUIRED,
    reason="chromium is not installed (apt-get install chromium): the HTML page is "
    "checked in a real headless browser",
)

PROBE_ID = "tunecore-test-probe"


def _chromium(page: Path, profile: Path, *flags: str) -> str:
    if CHROMIUM is None:
        pytest.fail("TUNECORE_REQUIRE_BROWSER=1 but chromium is not installed")
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",  # the tests may run as root (in a container)
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            f"--user-data-dir={profile}",
            *flags,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def driven(page: Path, script: str, scratch: Path) -> Path:
    """A copy of `page` in `scratch` that, once its own scripts have run,
    runs `script` (the body of a function) and leaves what it returns (as
    JSON) in the DOM, for `probe`."""
    copy = scratch / f"driven-{page.name}"
    runner = (
        "<script>(function () {"
        "let seen;"
        f"try {{ seen = (function () {{ {script} }})(); }}"
        "catch (error) { seen = {probeFailed: String(error) + '\\n' + error.stack}; }"
        f"const out = document.createElement('pre'); out.id = '{PROBE_ID}'; out.hidden = true;"
        "out.textContent = JSON.stringify(seen); document.body.append(out);"
        "})();</script>"
    )
    text = page.read_text(encoding="utf-8")
    assert text.count("</body>") == 1
    copy.write_text(text.replace("</body>", runner + "</body>"), encoding="utf-8")
    return copy


def probe(page: Path, script: str, scratch: Path) -> Any:
    """What `script` (see `driven`) returns in `page`."""
    dom = _chromium(driven(page, script, scratch), scratch / "chromium-profile", "--dump-dom")
    found = re.search(f'<pre id="{PROBE_ID}"[^>]*>(.*?)</pre>', dom, re.DOTALL)
    assert found is not None, f"the probe left nothing; the DOM:\n{dom[:3000]}"
    seen = json.loads(html.unescape(found.group(1)))
    assert not (isinstance(seen, dict) and "probeFailed" in seen), seen["probeFailed"]
    return seen


def screenshot(page: Path, out: Path, scratch: Path, size: tuple[int, int] = (1280, 760)) -> Path:
    """A PNG of `page` as a `size` window shows it."""
    _chromium(
        page,
        scratch / "chromium-profile",
        f"--screenshot={out}",
        f"--window-size={size[0]},{size[1]}",
        "--hide-scrollbars",
    )
    return out
