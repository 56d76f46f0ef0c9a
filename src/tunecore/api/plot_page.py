"""The HTML pages `tunecore plot` and `tunecore simulate --plot` write.

The curves page is interactive and self-contained (no network: it opens
offline): its data is a JSON block (`<script type="application/json">`),
drawn by `plot_page.js` into SVG, styled by `plot_page.css`, both shipped
with the package and inlined. Every text in it comes from an experiment's
log, which anyone who could write the experiment could have chosen, so
none is markup: HTML text is escaped (`html.escape`), the JSON has its
`<`, `>` and `&` written as `\\u003c`, `\\u003e`, `\\u0026` (so neither
`</script>` nor `<!--` can end the block early), and the script sets
texts, never HTML.
"""

from __future__ import annotations

import base64
import html
import json
from importlib import resources
from typing import Any

_ASSETS = resources.files(__package__ or "tunecore.api")


def interactive(title: str, data: dict[str, Any], png: bytes) -> str:
    """The curves page: `data` drawn by plot_page.js, and the picture
    `png` (the same curves with the rungs and lineage panels) below."""
    return (
        _head(title) + '<p class="hint">Hover a curve for its trial, iteration, value and config; '
        "click a trial in the list to highlight it (again to let go).</p>\n"
        '<div id="tunecore-plot"></div>\n'
        "<noscript>The interactive chart needs JavaScript; the picture below does not."
        "</noscript>\n"
        "<details><summary>As a picture (with ASHA's rungs or PBT's lineage, if any)</summary>"
        f"{_image(title, png)}</details>\n"
        f'<script type="application/json" id="tunecore-plot-data">{script_json(data)}</script>\n'
        f"<script>\n{_asset('plot_page.js')}</script>\n"
        "</body>\n</html>\n"
    )


def picture(title: str, png: bytes) -> str:
    """A page holding the picture `png` alone."""
    return _head(title) + _image(title, png) + "\n</body>\n</html>\n"


def script_json(data: dict[str, Any]) -> str:
    """`data` as JSON that can sit inside a `<script>` element: no `<`,
    `>` or `&` left that HTML could read as the end of the element."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _head(title: str) -> str:
    shown = html.escape(title)
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{shown}</title>\n<style>\n{_asset('plot_page.css')}</style>\n</head>\n"
        f"<body>\n<h1>{shown}</h1>\n"
    )


def _image(title: str, png: bytes) -> str:
    encoded = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(title)}" src="data:image/png;base64,{encoded}">'


def _asset(name: str) -> str:
    """A file shipped beside this module, to be inlined: ours, so it holds
    no `</` (which would end its element early; checked by the tests)."""
    return _ASSETS.joinpath(name).read_text(encoding="utf-8")
