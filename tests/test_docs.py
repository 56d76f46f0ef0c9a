"""The documentation tells the truth: the transition table is the one the
code runs; the snippets of the README and docs/ run as written, from a
directory outside the clone with only the installed package importable;
the commands they name exist; their links lead somewhere."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import tunecore
from tunecore.cli import EXIT_CODES
from tunecore.cli.parser import build_parser
from tunecore.core import TRANSITIONS, format_transitions, transitions_dot

pytestmark = pytest.mark.slow  # the snippets run on a real Ray, each page in a process

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


REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]


def fenced_blocks(text: str, language: str) -> list[str]:
    """The ```language blocks of a markdown text, in order."""
    return [part.split("```", 1)[0] for part in text.split(f"```{language}\n")[1:]]


PAGES_WITH_SNIPPETS = [
    page for page in PAGES[1:] if fenced_blocks(page.read_text(encoding="utf-8"), "python")
]

# What a snippet subprocess runs: it refuses to start if anything of the
# clone but the package is importable (so a snippet cannot lean on `tests.`,
# `benchmarks.` or `examples.`), then runs the page's blocks, read from
# stdin, in order in one namespace, as a user pasting them into one session.
RUNNER = """
import importlib.util, json, sys
from pathlib import Path

repo, page = Path(sys.argv[1]), sys.argv[2]
for entry in sys.path:
    if Path(entry or ".").resolve() == repo:
        raise SystemExit(f"the clone {repo} is on sys.path: {sys.path}")
for name in ("tests", "benchmarks", "examples", "scripts"):
    spec = importlib.util.find_spec(name)
    places = [] if spec is None else [spec.origin or "", *(spec.submodule_search_locations or [])]
    # (The environment may live inside the clone, `.venv`: what is installed
    # there, such as a dependency's stray top-level `tests`, is not the clone's.)
    if any(
        place
        and Path(place).resolve().is_relative_to(repo)
        and not Path(place).resolve().is_relative_to(Path(sys.prefix).resolve())
        for place in places
    ):
        raise SystemExit(f"the clone's {name} is importable from {places}")
namespace = {"__name__": "__main__"}
for number, block in enumerate(json.load(sys.stdin), start=1):
    exec(compile(block, f"{page} python block {number}", "exec"), namespace)
"""


def run_snippets(page: Path, home: Path) -> None:
    """Run `page`'s python blocks in a fresh interpreter whose working
    directory and HOME are `home`, with only the installed tunecore on its
    path: its package root (`src` for a clone's editable install), never the
    clone's root, and no Ray address inherited from this process."""
    package_root = Path(tunecore.__file__).resolve().parent.parent
    assert package_root != REPO
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAY_ADDRESS")}
    env |= {"HOME": str(home), "PYTHONPATH": str(package_root)}
    name = page.relative_to(REPO).as_posix()
    blocks = fenced_blocks(page.read_text(encoding="utf-8"), "python")
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(REPO), name],
        input=json.dumps(blocks),
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{name}:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"


def test_the_readmes_python_snippets_run_as_written_outside_the_clone(tmp_path: Path) -> None:
    """Every Python block of the README, in order, in one session started
    in an empty directory; `~` is that directory."""
    assert len(fenced_blocks(README.read_text(encoding="utf-8"), "python")) >= 4
    run_snippets(README, tmp_path)
    assert (tmp_path / "tunecore_results" / "lr_sweep" / "events.log").is_file()


@pytest.mark.parametrize("page", PAGES_WITH_SNIPPETS, ids=lambda page: page.name)
def test_the_docs_python_snippets_run_as_written_outside_the_clone(
    page: Path, tmp_path: Path
) -> None:
    """The same for each page of docs/ that has Python blocks (each page is
    a session of its own)."""
    run_snippets(page, tmp_path)


def test_the_readmes_console_examples_show_what_runs() -> None:
    """Each `>>> ` line of the README runs in one namespace that starts
    empty, so the examples show their imports. A line followed by output
    (the lines up to the next `>>> ` or the block's end) must raise that
    error: `Type: message`, compared with whitespace collapsed, a trailing
    `...` eliding the rest of the message."""
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
    assert any(shown for _, shown in examples)
    namespace: dict[str, object] = {}
    for source, shown in examples:
        if not shown:
            exec(source, namespace)
            continue
        kind, _, message = shown.partition(": ")
        with pytest.raises(Exception) as raised:  # noqa: PT011 - the type is checked below
            eval(source, namespace)
        assert type(raised.value).__name__ == kind, source
        text = " ".join(str(raised.value).split())
        assert message.removesuffix("...").strip() in text, (source, text)


def shell_commands(text: str) -> list[list[str]]:
    """The commands of a page's ```bash blocks, split as the shell splits
    them (continued lines joined, comments dropped)."""
    commands = []
    for block in fenced_blocks(text, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            if words := shlex.split(line, comments=True):
                commands.append(words)
    return commands


def inline_commands(text: str, program: str) -> list[list[str]]:
    """The commands of `program` quoted in a page's running text
    (`tunecore plot DIR`), split as the shell splits them."""
    quoted = re.findall(rf"`({re.escape(program)} [^`]*)`", text)
    return [shlex.split(command) for command in quoted]


def test_every_tunecore_command_in_the_docs_is_one_the_cli_takes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A command in a ```bash block parses as written (its flags exist); one
    named in the text is at least a real subcommand."""
    parser = build_parser(EXIT_CODES)
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for words in shell_commands(text):
            if words[0] == "tunecore":
                try:
                    parser.parse_args(words[1:])
                except SystemExit:
                    pytest.fail(f"{page.name}: {shlex.join(words)}: {capsys.readouterr().err}")
        for words in inline_commands(text, "tunecore"):
            # `tunecore stop|add URI` names two; `tunecore COMMAND` none
            for command in words[1].split("|") if words[1].islower() else []:
                with pytest.raises(SystemExit) as helped:
                    parser.parse_args([command, "--help"])
                assert helped.value.code == 0, f"{page.name}: {shlex.join(words)}"
    capsys.readouterr()


def dev_commands(dev: str) -> set[str]:
    """The commands the `dev` script's `case` takes."""
    return set(re.findall(r"^\s+([a-z]+)\)", dev, re.MULTILINE))


def nox_sessions(noxfile: str) -> set[str]:
    """The sessions a noxfile defines."""
    return set(re.findall(r"^@nox\.session.*\n(?:@.*\n)*def (\w+)\(", noxfile, re.MULTILINE))


def test_every_dev_command_in_the_readme_exists() -> None:
    """`./dev X` is a command of the dev script, and `./dev nox -s NAME` a
    session of the noxfile, in the blocks and in the text."""
    commands = dev_commands((REPO / "dev").read_text(encoding="utf-8"))
    sessions = nox_sessions((REPO / "noxfile.py").read_text(encoding="utf-8"))
    text = README.read_text(encoding="utf-8")
    named = [w for w in shell_commands(text) + inline_commands(text, "./dev") if w[0] == "./dev"]
    assert len(named) >= 4
    for words in named:
        assert words[1] in commands, shlex.join(words)
        if words[1] == "nox" and "-s" in words:
            assert words[words.index("-s") + 1] in sessions, shlex.join(words)


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    headings = re.findall(
        r"^#+ (.+)$", "\n".join(re.split(r"^```.*?^```", text, flags=re.M | re.S)), re.MULTILINE
    )
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_the_links_between_the_pages_lead_somewhere(page: Path) -> None:
    """Every relative link (and image) of the README and docs/ names a file
    that exists, and a `#section` of a markdown page one of its headings."""
    text = page.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name}: {target}"
        if anchor and linked.suffix == ".md":
            anchors = heading_anchors(linked.read_text(encoding="utf-8"))
            assert anchor in anchors, f"{page.name}: {target} (headings: {sorted(anchors)})"
