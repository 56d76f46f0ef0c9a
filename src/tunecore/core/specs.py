"""Normalising what users write into spec fields."""

from __future__ import annotations

from collections.abc import Iterable

from tunecore.model import ExportFormat, InvalidFieldError


def parse_export_formats(formats: Iterable[str]) -> tuple[ExportFormat, ...]:
    """Case and surrounding spaces do not matter (`" H5 "` is `h5`); an
    unknown format is an error naming it and the accepted ones."""
    accepted = ", ".join(f.value for f in ExportFormat)
    parsed = []
    for raw in formats:
        if not isinstance(raw, str):
            raise InvalidFieldError("export_formats", raw, f"one of {accepted}")
        try:
            parsed.append(ExportFormat(raw.strip().lower()))
        except ValueError:
            raise InvalidFieldError("export_formats", raw, f"one of {accepted}") from None
    return tuple(parsed)
