"""Checkpoints as data: where one lives, and the policy that says when to take
and how many to keep."""

from __future__ import annotations

import enum

import msgspec
from msgspec import UNSET, UnsetType

from tunecore.model.errors import (
    coerce_enum,
    require_bool,
    require_int,
    require_name,
    unset_unless_true,
)
from tunecore.model.json import JsonDict
from tunecore.model.objective import Mode


class CheckpointStorage(enum.StrEnum):
    """MEMORY checkpoints live in the object store and die with the cluster;
    PERSISTENT ones are directories on disk and survive a crash."""

    MEMORY = "memory"
    PERSISTENT = "persistent"


class CheckpointRef(msgspec.Struct, frozen=True, kw_only=True):
    """A checkpoint that exists: its storage, its location (a directory for
    PERSISTENT, an object-store key for MEMORY), the training iteration it was
    taken at and the metrics of the result it belongs to (used for scoring).

    `empty`: True when the save found no state to keep: a function
    trainable that had reported no checkpoint (since it last started
    fresh) saves tunecore's *null checkpoint*, which restores as a fresh
    start. PBT does not clone such a donor (Ray's save resolves to no
    checkpoint there and it skips the exploit). Only persistent saves say
    so (PBT clones only those); a memory one leaves it unset. Unset unless
    True (False is stored as unset), and an unset field is never encoded:
    every checkpoint with state, and every log and snapshot written
    before the field existed, encodes to the bytes it had, and an old
    log's null checkpoints replay as the donors they were then.

    `earlier`: True when the save holds a checkpoint the trainable reported
    with an earlier result than the one it was saved at (a function
    trainable saved between two of its checkpoints: its save is the last
    one it reported). Ray's save of such a function resolves to the
    checkpoint reported with its last result, none, so its PBT does not
    clone it (`core.checkpoints.perturbation_checkpoint`). Unset unless
    True, as `empty`, for the same reason."""

    storage: CheckpointStorage
    path: str
    training_iteration: int = 0
    metrics: JsonDict = {}
    empty: bool | UnsetType = UNSET
    earlier: bool | UnsetType = UNSET

    def __post_init__(self) -> None:
        coerce_enum(self, "storage", CheckpointStorage)
        unset_unless_true(self, "empty")
        unset_unless_true(self, "earlier")

    @property
    def holds_state(self) -> bool:
        """Whether restoring it brings a trainable's state back (see `empty`)."""
        return self.empty is not True

    @property
    def of_its_result(self) -> bool:
        """Whether it holds the state of the result it was saved at: state,
        reported with that result (see `empty` and `earlier`)."""
        return self.holds_state and self.earlier is not True


class CheckpointPolicy(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """When to checkpoint and which persistent checkpoints to keep.

    - `frequency`: every N training iterations (0: never by count);
    - `at_end`: once more when the trial terminates;
    - `num_to_keep`: keep the best N persistent checkpoints by
      `score_attribute` in `score_order` (None: keep all). The newest one is
      kept besides them while it is the restore point;
    - `persist_due`: a checkpoint due on a result (the trainable reported
      one, or `frequency` says so) is saved persistently also when the
      trial pauses or PBT exploits it on that result. None in policies
      logged before this field existed, whose runs then kept it in memory
      only (or not at all): they replay as they ran. `new_experiment` makes
      it True.
    """

    frequency: int = 0
    at_end: bool = False
    num_to_keep: int | None = None
    score_attribute: str = "training_iteration"
    score_order: Mode = Mode.MAX
    persist_due: bool | None = None

    def __post_init__(self) -> None:
        if self._plain():
            return
        require_int("CheckpointPolicy.frequency", self.frequency, minimum=0)
        require_bool("CheckpointPolicy.at_end", self.at_end)
        if self.num_to_keep is not None:
            require_int("CheckpointPolicy.num_to_keep", self.num_to_keep, minimum=1)
        require_name("CheckpointPolicy.score_attribute", self.score_attribute)
        coerce_enum(self, "score_order", Mode)

    def _plain(self) -> bool:
        """The common case, which `__post_init__`'s checks would leave as it
        is (every trial's spec holds a policy: a snapshot decodes one per
        trial): no count of checkpoints to keep, every other field of its
        type and in range. (Typed `object`: a caller may pass anything.)"""
        frequency: object = self.frequency
        at_end: object = self.at_end
        score_attribute: object = self.score_attribute
        return (
            type(frequency) is int
            and frequency >= 0
            and type(at_end) is bool
            and self.num_to_keep is None
            and type(score_attribute) is str
            and score_attribute != ""
            and type(self.score_order) is Mode
        )


class CheckpointHistory(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The checkpoints a trial still holds.

    `persistent` is ordered oldest first and holds exactly the best
    `num_to_keep` persistent checkpoints ever taken plus the newest one; every
    other one was handed to the shell for deletion. Only the newest MEMORY
    checkpoint is kept. `memory_is_newest` records arrival order between the
    two kinds, which no other field can tell.
    """

    persistent: tuple[CheckpointRef, ...] = ()
    memory: CheckpointRef | None = None
    memory_is_newest: bool = False
