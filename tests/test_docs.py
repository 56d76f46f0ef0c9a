"""The documentation shows the transition table the code actually runs."""

from __future__ import annotations

from pathlib import Path

from tunecore.core import format_transitions

ARCHITECTURE = Path(__file__).parent.parent / "docs" / "architecture.md"


def test_architecture_doc_shows_the_live_transition_table() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    begin = text.index("<!-- transitions:begin -->")
    end = text.index("<!-- transitions:end -->")
    shown = text[begin:end].split("```")[1].strip("\n")
    assert shown == format_transitions()
