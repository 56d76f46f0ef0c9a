"""The state of a whole experiment, and the configuration fixed at its start.

Invariants the step function keeps (and the stateful tests check):
- `trials` holds every trial ever created, by id; `index` its creation order.
- `pending` and `paused` list the PENDING and PAUSED trials in creation
  order; `running` counts RUNNING ones and `used` is the sum of their
  resources, never more than `total`.
- `created` and `finished` (TERMINATED and ERROR trials) are derived from
  these, not kept; `saves` counts the checkpoint saves in flight across
  all trials.
- `done` is final: a done experiment rejects every event.

Per-trial collections are persistent maps (`immutables.Map`, a HAMT), so an
event costs O(log n) in the number of trials, never a copy of them.
"""

from __future__ import annotations

import immutables
import msgspec

from tunecore.core.resources import nothing
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.search.base import SearchPolicy
from tunecore.core.stoppers import BuiltinStopper
from tunecore.model import (
    CheckpointPolicy,
    ExportFormat,
    InvalidFieldError,
    Mode,
    Resources,
    TrialState,
    parse_export_formats,
)
from tunecore.model.errors import (
    coerce_enum,
    float_valued,
    floats_as_decoded,
    require_bool,
    require_int,
    require_name,
)
from tunecore.model.numbers import is_number


class ExperimentConfig(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What every trial of the experiment shares, and its global limits.

    A field added here takes a default (omitted when default). Past 15
    fields msgspec writes a wider map header, so a snapshot of an older
    tunecore re-encodes to other bytes; replay therefore compares such a
    snapshot after reading it (`shell.replay`), and old logs still verify.

    `max_pending_trials` bounds how many trials wait for resources at once
    (the searcher is asked for more only below it). `time_budget_s` and
    `max_trials` stop the whole experiment (the experiment-wide stopper);
    time comes from event timestamps.
    """

    trainable_name: str
    metric: str | None = None
    mode: Mode | None = None
    stopping_criterion: dict[str, float | bool] = {}
    checkpoint_policy: CheckpointPolicy = CheckpointPolicy()
    resources_per_trial: Resources = Resources()
    max_failures: int = 0
    fail_fast: bool = False
    max_pending_trials: int = 16
    time_budget_s: float | None = None
    max_trials: int | None = None
    trial_id_prefix: str = "trial"
    export_formats: tuple[ExportFormat, ...] = ()
    checked_metrics: dict[str, str] | None = None
    """Strict metric checking (Ray's): the metrics every result must report,
    each with what expects it (`TuneConfig(metric=...)`, or the scheduler's
    or searcher's type). None: `new_experiment` fills it in from `metric`
    and the policies' `metric` attributes; `{}` checks nothing (Ray's
    `TUNE_DISABLE_STRICT_METRIC_CHECKING=1`). A log from before this field
    has None and checks `metric` alone, as it did."""
    resources_from_config: bool = False
    """Each trial's resources depend on its config (user code decides): a
    new trial waits until the shell answers its `ResolveResources`.
    `resources_per_trial` then only stands in until the answer."""
    chain_starts: int = 0
    """How many waiting trials may be chained behind a starting trial
    (`ChainTrials`): run on its worker one after another as each returns,
    before the driver hears of the end. Only where no decision could
    differ (`core.experiment.chains`); 0 never chains. The shell sets it
    when its executor chains and nothing of the user's watches a start."""
    restore_path: str | None = None
    """A checkpoint every trial starts from until it has one of its own
    (Ray's `tune.run(restore=...)`): copied into each new trial's spec."""
    end_repeats_result: bool | None = None
    """A function trainable's end (its end marker) is taken as Ray Tune
    2.60's controller takes it: as the trial's last result again, marked
    `done` (`results.repeated_at_end`), which the stoppers hear (a stateful
    one counts that value twice) before the trial stops on it, and which
    the scheduler and the searcher hear the trial complete with. Nothing
    else judges it: the trial stops whatever the stoppers say, and the
    callbacks do not see it. None in a log from before this field, which
    replays as it ran (its stoppers never heard an end, and its policies
    heard the last result as it was recorded), as with False;
    `new_experiment` makes None True."""

    def __post_init__(self) -> None:
        require_name("ExperimentConfig.trainable_name", self.trainable_name)
        if self.mode is not None:
            coerce_enum(self, "mode", Mode)
        require_int("ExperimentConfig.max_failures", self.max_failures, minimum=-1)
        require_bool("ExperimentConfig.fail_fast", self.fail_fast)
        require_int("ExperimentConfig.max_pending_trials", self.max_pending_trials, minimum=1)
        require_int("ExperimentConfig.chain_starts", self.chain_starts, minimum=0)
        if self.max_trials is not None:
            require_int("ExperimentConfig.max_trials", self.max_trials, minimum=0)
        budget: object = self.time_budget_s
        if budget is not None and not (is_number(budget) and budget > 0):
            raise InvalidFieldError(
                "ExperimentConfig.time_budget_s", budget, "a number of seconds > 0"
            )
        floats_as_decoded(self, "time_budget_s")
        msgspec.structs.force_setattr(
            self, "stopping_criterion", float_valued(self.stopping_criterion)
        )
        require_name("ExperimentConfig.trial_id_prefix", self.trial_id_prefix)
        msgspec.structs.force_setattr(
            self, "export_formats", parse_export_formats(self.export_formats)
        )
        if "/" in self.trial_id_prefix:
            raise InvalidFieldError(
                "ExperimentConfig.trial_id_prefix", self.trial_id_prefix, "a name without '/'"
            )


class ExperimentState(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Everything `step` needs; see the module docstring for the invariants."""

    config: ExperimentConfig
    scheduler: TrialScheduler
    searcher: SearchPolicy | None
    stopper: BuiltinStopper | None = None
    trials: immutables.Map[str, TrialState] = immutables.Map()
    index: immutables.Map[str, int] = immutables.Map()
    pending: tuple[str, ...] = ()
    paused: tuple[str, ...] = ()
    running: int = 0
    saves: int = 0
    total: Resources | None = None
    used: Resources = nothing()
    started_at: float | None = None
    now: float = 0.0
    stopping: str | None = None
    done: bool = False
    error: str | None = None

    @property
    def created(self) -> int:
        """How many trials were created (trials are never forgotten)."""
        return len(self.index)

    @property
    def finished(self) -> int:
        """How many trials ended: every trial is in exactly one of the
        queues, the running count or the finished."""
        return len(self.index) - len(self.pending) - len(self.paused) - self.running


def trial_id_of(config: ExperimentConfig, number: int) -> str:
    """The id of the experiment's trial number `number` (from 0, in
    creation order): ids are given in order, so the trials created in a
    span are known from the count before and after it, and creation order
    needs no sort."""
    return f"{config.trial_id_prefix}_{number:05d}"


def trial_number(config: ExperimentConfig, trial_id: str) -> int:
    """The number of the experiment's trial `trial_id` (`trial_id_of`'s
    inverse)."""
    return int(trial_id[len(config.trial_id_prefix) + 1 :])


def ids_in_order(config: ExperimentConfig, created: int) -> list[str]:
    """The ids of the first `created` trials, in the order they were created."""
    return [trial_id_of(config, number) for number in range(created)]


def trials_in_order(state: ExperimentState) -> list[TrialState]:
    """Every trial of `state`, in the order it was created."""
    trials = state.trials
    return [trials[trial_id] for trial_id in ids_in_order(state.config, state.created)]
