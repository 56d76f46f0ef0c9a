"""The refusal of command-line arguments that are not valid UTF-8, for
every argument of every command, with the bytes shown escaped."""

from __future__ import annotations

import argparse

from tunecore.cli.errors import CliError
from tunecore.cli.parser import Parser


def refuse_undecodable(parser: Parser, args: argparse.Namespace) -> None:
    """A `CliError` naming the first argument that is not valid UTF-8.

    Python decodes the command line with `surrogateescape`, so bytes that
    are not UTF-8 arrive as lone surrogates, which nothing downstream can
    write (a log, an inbox entry, a JSON file). They are refused here, for
    every argument of every command at once, with the bytes shown escaped."""
    for action in _actions(parser, args.command):
        text = _undecodable(getattr(args, action.dest, None))
        if text is not None:
            name = action.option_strings[0] if action.option_strings else action.metavar
            raise CliError(f'{name or action.dest}: "{_escaped(text)}" is not valid UTF-8')


def _actions(parser: Parser, command: str) -> list[argparse.Action]:
    """The arguments of `parser` and of its sub-command `command`."""
    return [*parser.arguments, *parser.commands[command].arguments]


def _undecodable(value: object) -> str | None:
    """The first string in `value` (a parsed argument: a string, or lists
    and tuples of them) holding a lone surrogate, or None."""
    if isinstance(value, str):
        return value if any("\ud800" <= char <= "\udfff" for char in value) else None
    if isinstance(value, list | tuple):
        return next((bad for item in value if (bad := _undecodable(item)) is not None), None)
    return None


def _escaped(text: str) -> str:
    """`text` with the bytes its lone surrogates stand for written as
    `\\xNN` (or, for a surrogate that stands for no byte, as `\\uNNNN`)."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")
