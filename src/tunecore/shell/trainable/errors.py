"""The error a worker trainable raises when the user's code failed, and the
failure text users read (`error.txt`, `Result.error`).

A failure reaches the driver as text: Python's traceback of the user's
exception, wrapped in tunecore's own (the executor, the worker host, the
trainable wrapper, the function's thread) and, on Ray, decorated by Ray
with terminal colour codes and `ray::Actor.method() (pid=...)` headers.
Read raw, the user's own frames come last, after a screen of tunecore's.
`user_frames_first` rewrites it: colour codes stripped, then a traceback
of the user's frames ending in their exception, then tunecore's frames
under a label, for a bug report. It works on the text, so it applies the
same to every executor and to tracebacks Ray formatted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


class TrainableError(Exception):
    """The user's trainable failed; the message holds what went wrong and,
    when it raised, the formatted traceback from the thread it ran in.

    The traceback travels as text, not as the original exception object:
    the exception may not pickle (Ray ships errors from the actor to the
    driver) and the executor only needs the text for `TrialFailed.error`.
    The only constructor argument is the message, so it pickles as is."""


TUNECORE_DIR = str(Path(__file__).resolve().parents[2])
"""The tunecore package's directory: frames in files under it are
tunecore's, every other frame is the user's (or a library they called)."""

TUNECORE_FRAMES_LABEL = "tunecore's own frames, which ran the code above (for a bug report):"

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_FRAME = re.compile(r'^(\s*)File "(?P<file>[^"]+)", line \d+')
_TRACEBACK = "Traceback (most recent call last):"
_RAY_HEADER = re.compile(r"^ray::\S+ \(pid=")
_MARKERS = re.compile(r"^\s*[\^~]+\s*$")  # a frame's ^^^ line left alone by Ray's rewrite


def strip_ansi(text: str) -> str:
    """`text` without terminal control sequences (colours, cursor moves)."""
    return _ANSI.sub("", text)


@dataclass
class _Segment:
    """One traceback in the text: its header lines, its frames (each a list
    of lines: the `File` line and the code under it) and what follows them
    (the exception, a chaining note)."""

    headers: list[str] = field(default_factory=list)
    user: list[list[str]] = field(default_factory=list)
    own: list[list[str]] = field(default_factory=list)
    after: list[str] = field(default_factory=list)


def _segments(lines: list[str]) -> list[_Segment]:
    segments = [_Segment()]
    frame: list[str] | None = None
    indent = 0
    for line in lines:
        if frame is not None and line.startswith(" " * (indent + 1)) and line.strip():
            frame.append(line)  # the frame's code and markers
            continue
        frame = None
        current = segments[-1]
        if line.strip() == _TRACEBACK or _RAY_HEADER.match(line):
            if current.user or current.own or current.after:
                segments.append(current := _Segment())
            current.headers.append(line)
        elif (match := _FRAME.match(line)) is not None:
            if current.after:  # frames after an exception: a traceback without its header
                segments.append(current := _Segment())
            frame, indent = [line], len(match.group(1))
            own = match.group("file").startswith(TUNECORE_DIR)
            (current.own if own else current.user).append(frame)
        elif _MARKERS.match(line) and not current.after:
            continue
        else:
            current.after.append(line)
    return segments


def user_frames_first(text: str) -> str:
    """The failure text as users read it (module docstring). Text without
    any of tunecore's frames is returned with colour codes stripped only."""
    plain = strip_ansi(text)
    segments = _segments(plain.rstrip("\n").splitlines())
    if not any(segment.own for segment in segments):
        return plain
    users = [s for s in segments if s.user or not s.own]
    if not users:  # tunecore failed on its own: its frames are the story
        users = segments[-1:]
    shown = {id(segment) for segment in users}
    out: list[str] = []
    for segment in users:
        out.append(_TRACEBACK)
        out.extend(line for frame in segment.user for line in frame)
        out.extend(segment.after)
    out.extend(["", TUNECORE_FRAMES_LABEL])
    for segment in segments:
        out.extend(h for h in segment.headers if h.strip() != _TRACEBACK)
        out.extend(line for frame in segment.own for line in frame)
        if id(segment) not in shown:
            out.extend(line for line in segment.after if line.strip())
    return "\n".join(out) + "\n"


def failure_reason(text: str) -> str:
    """The one line that says what went wrong: the last line of the user's
    part of a failure text (their exception), before tunecore's frames."""
    users = text.partition(f"\n{TUNECORE_FRAMES_LABEL}")[0]
    lines = [line.strip() for line in users.splitlines() if line.strip()]
    return lines[-1] if lines else ""
