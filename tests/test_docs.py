"""The documentation tells the truth: the transition table is the one the
code runs, and the README's snippets run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tunecore.core import TRANSITIONS, format_transitions, transitions_dot

ARCHITECTURE = Path(__file__).parent.parent / "docs" / "architecture.md"


def test_architecture_doc_shows_the_live_transition_table() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    begin = text.index("<!-- transitions:begin -->")
    end = text.index("<!-- transitions:end -->")
    shown = text[begin:end].split("```")[1].strip("\n")
    assert shown == format_transitions()


def test_the_lifecycle_graph_in_the_docs_is_the_live_table() -> None:
    shown = (ARCHITECTURE.parent / "lifecycle.dot").read_text(encoding="utf-8")
    assert shown.strip() == transitions_dot()


def test_the_lifecycle_graph_has_an_edge_for_every_row_of_the_table() -> None:
    edges = set(re.findall(r"^  (\w+) -> (\w+) \[", transitions_dot(), re.MULTILINE))
    expected = {
        (status.value, target.value)
        for (status, _), rule in TRANSITIONS.items()
        for target in rule.targets
    }
    assert edges == expected
    for (status, event), rule in TRANSITIONS.items():
        for target in rule.targets:
            edge = re.search(
                rf'^  {status.value} -> {target.value} \[label="([^"]*)"\];',
                transitions_dot(),
                re.MULTILINE,
            )
            assert edge is not None
            assert event.__name__ in edge.group(1).split("\\n")


README = Path(__file__).parent.parent / "README.md"


def python_blocks(text: str) -> list[str]:
    """The ```python blocks of a markdown text, in order."""
    blocks = []
    for part in text.split("```python\n")[1:]:
        blocks.append(part.split("```", 1)[0])
    return blocks


@pytest.mark.usefixtures("ray_cluster")
def test_the_readmes_python_snippets_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every Python block of the README, in order, as one session would run
    them (later blocks use what earlier ones made); `~` is a fresh home."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    namespace: dict[str, object] = {"__name__": "__main__"}
    for number, block in enumerate(blocks, start=1):
        code = compile(block, f"README.md python block {number}", "exec")
        exec(code, namespace)
    assert (tmp_path / "tunecore_results").is_dir()


def test_the_readmes_error_examples_are_the_errors_raised() -> None:
    """Each `>>> expression` line and the `Type: message` lines after it,
    up to the next `>>>` or the block's end (compared with whitespace
    collapsed; a trailing `...` elides the rest of the message)."""
    from tunecore import TuneConfig  # noqa: PLC0415 - the names the examples use
    from tunecore.model import Resources  # noqa: PLC0415

    names = {"TuneConfig": TuneConfig, "Resources": Resources}
    lines = README.read_text(encoding="utf-8").splitlines()
    examples = []
    for i, line in enumerate(lines):
        if line.startswith(">>> "):
            output: list[str] = []
            for following in lines[i + 1 :]:
                if following.startswith((">>> ", "```")):
                    break
                output.append(following.strip())
            examples.append((line[4:], " ".join(output)))
    assert examples
    for expression, shown in examples:
        kind, _, message = shown.partition(": ")
        with pytest.raises(Exception) as raised:  # noqa: PT011 - the type is checked below
            eval(expression, dict(names))
        assert type(raised.value).__name__ == kind, expression
        text = " ".join(str(raised.value).split())
        expected = message.removesuffix("...").strip()
        assert expected in text, (expression, text)
