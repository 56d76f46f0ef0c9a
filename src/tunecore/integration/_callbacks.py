"""What the Keras and Lightning callbacks share: Ray's `metrics=` (which of
the framework's metrics a result holds, under which names), the hooks an
`on=` may name, and a model saved into a fresh directory reported as the
result's checkpoint.

The checkpoint goes through `tunecore.report(metrics,
checkpoint=Checkpoint.from_directory(...))`, which copies the directory
into the trial before it returns, so the temporary directory can go at
once and the checkpoint is kept, ranked and restored like any other
(retention, `best_checkpoints`, storage URIs, PBT's exploits, resume).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from tunecore.model import InvalidFieldError
from tunecore.shell.trainable import Checkpoint, report

Metrics = str | Sequence[str] | Mapping[str, str] | None
"""Ray's `metrics=`: one name, a list of names, or {reported name:
framework's name}; None reports every metric the framework has."""

Hooks = str | Sequence[str]
"""Ray's `on=`: one hook name (the framework's `on_<name>` method), or a
list of them."""


def metric_names(field: str, metrics: object) -> dict[str, str] | None:
    """`metrics=` as {reported name: framework's name}, or None for all."""
    if metrics is None:
        return None
    expected = "a metric name, a list of names, or a dict {reported name: framework's name}"
    if isinstance(metrics, str):
        return {metrics: metrics}
    if isinstance(metrics, Mapping):
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metrics.items()):
            raise InvalidFieldError(field, metrics, expected)
        return dict(metrics)
    if isinstance(metrics, Sequence) and all(isinstance(name, str) for name in metrics):
        return {name: name for name in metrics}
    raise InvalidFieldError(field, metrics, expected)


def hook_names(field: str, on: object, allowed: Collection[str]) -> list[str]:
    """`on=` as a list of hook names, each one of `allowed`."""
    hooks = [on] if isinstance(on, str) else on
    expected = f"a hook name or a list of them, each one of {sorted(allowed)}"
    if not isinstance(hooks, Sequence):
        raise InvalidFieldError(field, on, expected)
    for hook in hooks:
        if hook not in allowed:
            raise InvalidFieldError(field, hook, expected)
    return list(hooks)


def require_file_name(field: str, value: object) -> None:
    """A file name, no directory: the checkpoint's directory is made here."""
    if not isinstance(value, str) or not value or "/" in value:
        raise InvalidFieldError(field, value, "a file name, like 'model.ckpt'")


@contextmanager
def saved_checkpoint(
    save: Callable[[str], object], filename: str, metadata: Mapping[str, Any] | None = None
) -> Iterator[Checkpoint]:
    """A checkpoint of the directory `save` wrote `filename` into (with
    `metadata` stored in it, as Ray's framework checkpoints store theirs),
    valid until the block ends: report it inside the block."""
    with tempfile.TemporaryDirectory(prefix="checkpoint_") as directory:
        save(os.path.join(directory, filename))
        checkpoint = Checkpoint.from_directory(directory)
        if metadata:
            checkpoint.update_metadata(metadata)
        yield checkpoint


def report_saved(
    result: Mapping[str, Any],
    save: Callable[[str], object],
    filename: str,
    metadata: Mapping[str, Any] | None = None,
) -> None:
    """Report `result` with a checkpoint: the directory `save` wrote
    `filename` into (and `metadata`; `saved_checkpoint`)."""
    with saved_checkpoint(save, filename, metadata) as checkpoint:
        report(result, checkpoint=checkpoint)
