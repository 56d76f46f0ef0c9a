"""Every `pip install 'tunecore[extra]'` hint that tunecore's errors and docs
give, so that each can be checked to work as written (`nox -s package`
runs them against an installed wheel; tests/test_install_hints.py checks
each names an extra pyproject.toml declares).

    python scripts/install_hints.py    prints one requirement per line
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
HINT = re.compile(r"""pip install ["'](tunecore\[[a-z0-9,_-]+\])["']""")
# search._contract.require_package(owner, module, extra) words its hint itself.
REQUIRED_EXTRA = re.compile(r"""require_package\([^()]*,\s*["']([a-z0-9_-]+)["']\s*\)""")


def install_hints(root: Path = ROOT) -> list[str]:
    """The requirements (`tunecore[optuna]`) named by a hint in the library's
    source, the README or the docs, sorted and without repeats."""
    places = [
        *sorted((root / "src").rglob("*.py")),
        root / "README.md",
        *sorted((root / "docs").glob("*.md")),
    ]
    found: set[str] = set()
    for place in places:
        text = " ".join(place.read_text(encoding="utf-8").split())
        found.update(HINT.findall(text))
        found.update(f"tunecore[{extra}]" for extra in REQUIRED_EXTRA.findall(text))
    return sorted(found)


if __name__ == "__main__":
    print("\n".join(install_hints()))
