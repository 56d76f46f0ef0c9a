"""Ray's deprecated checkpoint arguments of `tune.run` on a `CheckpointConfig`.

`tunecore.run(checkpoint_freq=..., ...)` and `Tuner(_tuner_kwargs={...})`
both take them, and Ray 2.60 sets them in one place for both (its Tuner
calls `tune.run` with the `_tuner_kwargs`), so here one function does:
each argument counts only when set (a frequency above 0, a true
`checkpoint_at_end`, the others not None) and then overrides that field of
the config given, with Ray's `DeprecationWarning` naming the field to use.
An explicit `checkpoint_at_end=False` is therefore no setting at all, as in
Ray: the config's own value stays.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from tunecore.api.config import CheckpointConfig

LEGACY_CHECKPOINT_ARGUMENTS = frozenset(
    {"checkpoint_freq", "checkpoint_at_end", "keep_checkpoints_num", "checkpoint_score_attr"}
)


def with_legacy_checkpoints(
    config: CheckpointConfig, arguments: Mapping[str, Any]
) -> CheckpointConfig:
    """`config` with those of `arguments` (keyed by `tune.run`'s argument
    names, other keys ignored) that are set applied on top, as Ray's
    `tune.run` applies them."""
    fields: dict[str, Any] = {}
    if arguments.get("keep_checkpoints_num") is not None:
        _deprecated("keep_checkpoints_num", "num_to_keep")
        fields["num_to_keep"] = arguments["keep_checkpoints_num"]
    attribute = arguments.get("checkpoint_score_attr")
    if attribute is not None:
        if not isinstance(attribute, str):
            raise TypeError(
                f"checkpoint_score_attr={attribute!r} is invalid: expected a result key, "
                "or 'min-' and the key to keep the lowest"
            )
        _deprecated("checkpoint_score_attr", "checkpoint_score_attribute")
        minimise = attribute.startswith("min-")
        fields["checkpoint_score_attribute"] = attribute.removeprefix("min-")
        fields["checkpoint_score_order"] = "min" if minimise else "max"
    if (arguments.get("checkpoint_freq") or 0) > 0:
        _deprecated("checkpoint_freq", "checkpoint_frequency")
        fields["checkpoint_frequency"] = arguments["checkpoint_freq"]
    if arguments.get("checkpoint_at_end"):
        _deprecated("checkpoint_at_end", "checkpoint_at_end")
        fields["checkpoint_at_end"] = arguments["checkpoint_at_end"]
    if not fields:
        return config
    return CheckpointConfig(**{**dict(config), **fields})


def _deprecated(argument: str, field: str) -> None:
    warnings.warn(
        f"{argument} is deprecated and will be removed. use checkpoint_config.{field} instead.",
        DeprecationWarning,
        stacklevel=3,
    )
