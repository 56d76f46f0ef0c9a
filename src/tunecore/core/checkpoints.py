"""When a trial checkpoints, which checkpoint it restores from, and which
persistent checkpoints it keeps.

Retention invariant (checked by the stateful tests): after any sequence of
saves, `history.persistent` is exactly the best `num_to_keep` persistent
checkpoints ever taken, by score, plus the newest one; every other one was
returned for deletion exactly once. It holds by induction because the best
k of (best k of S, plus the old newest, plus c) is the best k of S with c.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

from tunecore.core.results import DONE, SHOULD_CHECKPOINT, TRAINING_ITERATION, flatten
from tunecore.model import (
    CheckpointHistory,
    CheckpointPolicy,
    CheckpointRef,
    CheckpointStorage,
    JsonValue,
    Mode,
    TrialState,
    TrialStatus,
)
from tunecore.model.numbers import is_number


def checkpoint_dirname(iteration: int) -> str:
    """The directory name of a checkpoint taken at `iteration`, as Ray's
    earlier trial runner named them: `checkpoint_000003`."""
    return f"checkpoint_{iteration:06d}"


_GENERATION_SUFFIX = re.compile(r"_g([1-9][0-9]*)$")


def generation_dirname(name: str, generation: int) -> str:
    """The name under which a worker of lease generation `generation`
    stores the checkpoint directory the driver named `name`, where
    storage is fenced by naming (`shell.mirror.upload_fence`):
    `checkpoint_000003_g2`. Two generations never share such a name, so
    a stale generation's upload replaces nothing a later one stored."""
    return f"{name}_g{generation}"


def dirname_generation(name: str) -> tuple[str, int]:
    """`name` without its `generation_dirname` suffix, and the generation
    it names (0 for a name without one: stored by the first generation,
    or by storage fenced otherwise)."""
    match = _GENERATION_SUFFIX.search(name)
    if match is None:
        return name, 0
    return name[: match.start()], int(match.group(1))


def should_checkpoint(policy: CheckpointPolicy, last_result: Mapping[str, JsonValue]) -> bool:
    """Due at the end when `at_end` is set, every `frequency` iterations, and
    whenever the trainable flagged a fresh checkpoint of its own."""
    if last_result.get(DONE) is True and policy.at_end:
        return True
    if last_result.get(SHOULD_CHECKPOINT) is True:
        return True
    iteration = last_result.get(TRAINING_ITERATION, 0)
    return bool(policy.frequency) and is_number(iteration) and iteration % policy.frequency == 0


def newest_persistent(history: CheckpointHistory) -> CheckpointRef | None:
    return history.persistent[-1] if history.persistent else None


def newest_with_state(history: CheckpointHistory) -> CheckpointRef | None:
    """The newest persistent checkpoint that holds state: the one users
    see as a trial's checkpoint. Ray registers no empty save as a
    checkpoint (`CheckpointRef.empty`), so a function trainable that never
    reported one has none (`Result.checkpoint` None)."""
    return next((ref for ref in reversed(history.persistent) if ref.holds_state), None)


def donor_checkpoint(history: CheckpointHistory) -> CheckpointRef | None:
    """The checkpoint PBT clones of a donor: its newest persistent one,
    None when there is none or it holds no state (`CheckpointRef.empty`:
    a function trainable that reported no checkpoint; Ray's save of one
    resolves to no checkpoint and its PBT skips the exploit)."""
    newest = newest_persistent(history)
    return newest if newest is not None and newest.holds_state else None


def perturbation_checkpoint(history: CheckpointHistory, iteration: int) -> CheckpointRef | None:
    """The checkpoint Ray's PBT clones of a donor it asked to save at its
    perturbation, on the result of `iteration`: the newest persistent save
    taken at that result, when it holds that result's state
    (`CheckpointRef.of_its_result`: a class trainable's save always does;
    a function trainable's only when it reported a checkpoint with that
    result, as Ray's save of a function resolves to the checkpoint of its
    last result). None otherwise: Ray skips the exploit."""
    at = (ref for ref in reversed(history.persistent) if ref.training_iteration == iteration)
    saved = next(at, None)
    return saved if saved is not None and saved.of_its_result else None


def current_checkpoint(trial: TrialState) -> CheckpointRef | None:
    """The checkpoint a (re)start restores from: the newest one; only the
    newest PERSISTENT one for a trial in ERROR (memory checkpoints do not
    outlive their worker), where the donor's checkpoint of PBT's exploit
    since the trial's last persistent save (`TrialState.exploited`) is
    newer than any of its own; the spec's restore path when there is none."""
    history = trial.checkpoints
    if trial.status is not TrialStatus.ERROR and history.memory_is_newest:
        checkpoint = history.memory
    elif trial.exploited is not None:
        checkpoint = trial.exploited.checkpoint
    else:
        checkpoint = newest_persistent(history)
    if checkpoint is None and trial.spec.restore_path is not None:
        return CheckpointRef(storage=CheckpointStorage.PERSISTENT, path=trial.spec.restore_path)
    return checkpoint


def score_key(checkpoint: CheckpointRef, policy: CheckpointPolicy) -> tuple[bool, float]:
    """Greater is better. A checkpoint whose result lacks the score attribute
    (or holds NaN or a non-number there) ranks below every scored one."""
    value = flatten(checkpoint.metrics).get(policy.score_attribute)
    if not is_number(value) or math.isnan(value):
        return (False, 0.0)
    score = float(value)
    return (True, score if policy.score_order is Mode.MAX else -score)


def record_checkpoint(
    history: CheckpointHistory, checkpoint: CheckpointRef, policy: CheckpointPolicy
) -> tuple[CheckpointHistory, tuple[CheckpointRef, ...]]:
    """Track a finished save; return the new history and the persistent
    checkpoints retention dropped (to be deleted by the shell).

    A MEMORY checkpoint replaces the previous one. A PERSISTENT one joins the
    retained set, which is then cut back to the best `num_to_keep` (ties go
    to the newer) plus the newest. A save to a path already held replaces
    that entry instead of dropping it, so no directory is deleted under a
    checkpoint still in use.
    """
    if checkpoint.storage is CheckpointStorage.MEMORY:
        return (
            CheckpointHistory(
                persistent=history.persistent, memory=checkpoint, memory_is_newest=True
            ),
            (),
        )
    candidates = (*(c for c in history.persistent if c.path != checkpoint.path), checkpoint)
    keep = policy.num_to_keep
    kept: tuple[CheckpointRef, ...]
    dropped: tuple[CheckpointRef, ...]
    if keep is None or len(candidates) <= keep:
        kept, dropped = candidates, ()
    else:
        ranked = sorted(
            range(len(candidates)),
            key=lambda i: (score_key(candidates[i], policy), i),
            reverse=True,
        )
        keep_indexes = {*ranked[:keep], len(candidates) - 1}
        kept = tuple(c for i, c in enumerate(candidates) if i in keep_indexes)
        dropped = tuple(c for i, c in enumerate(candidates) if i not in keep_indexes)
    return CheckpointHistory(persistent=kept, memory=history.memory), dropped


def holder_of(trials: Iterable[TrialState], ref: CheckpointRef | None, besides: str) -> str | None:
    """The trial other than `besides` that holds the checkpoint `ref` (in
    storage or in memory): the donor whose state a PBT exploit restores."""
    if ref is None:
        return None
    for other in trials:
        held = (*other.checkpoints.persistent, other.checkpoints.memory)
        if other.trial_id != besides and any(h is not None and h.path == ref.path for h in held):
            return other.trial_id
    return None
