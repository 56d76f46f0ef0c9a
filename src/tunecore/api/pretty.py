"""`pretty_print`: a result as readable YAML, as Ray Tune's
`ray.tune.logger.pretty_print` prints one in its examples."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from tunecore.shell.trainable.results import json_result

_NOT_SHOWN = ("config", "hist_stats")  # long, and not the result itself


def pretty_print(result: Mapping[str, object], exclude: Collection[str] | None = None) -> str:
    """`result` as block-style YAML, keys sorted, without its `config` and
    `hist_stats`, the keys in `exclude`, or None values. Values are shown
    as a trial's result stores them (numpy numbers and arrays as numbers
    and lists, other objects as text)."""
    import yaml  # noqa: PLC0415 - PyYAML comes with Ray; only loaded to print

    hidden = set(_NOT_SHOWN) | set(exclude or ())
    shown = {key: value for key, value in result.items() if key not in hidden and value is not None}
    plain = dict(json_result("pretty_print(result)", shown))  # YAML takes no dict subclass
    text: str = yaml.safe_dump(plain, default_flow_style=False)
    return text
