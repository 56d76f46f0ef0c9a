"""Replaying a PBT schedule (Ray Tune's `PopulationBasedTrainingReplay`).

PBT finds a schedule of configs rather than one config. With
`log_config=True` it writes each trial's schedule to
`pbt_policy_<trial_id>.txt` (one JSON line per exploit, see
`shell.pbt_policy`); this scheduler trains a single trial along one: it
starts with the schedule's first config, and each time the trial reaches
the iteration of the next change it saves a checkpoint, pauses, takes the
new config and goes on from that checkpoint, as Ray's does.

Theory of operation: `policy_changes` reads the file as Ray's
`_load_policy` does (from the end back, while each line's trial tag is the
previous line's donor tag: earlier lines were overwritten by a later
exploit); the first config is the oldest line's donor config. A change
is an exploit of the trial by itself, carried out while it waits
(`ExploitsWaiting`): the verdict pauses it with a persistent save, and
once that save is in, the trial takes the new config and restores it.

Invariants: at most one trial (a second is an error, as in Ray);
`next_change` indexes the first change not made; `changing` is True from
the pause for a change until the change is made, and the trial is not
started meanwhile. The core reads no file: Ray's constructor
(`tunecore.schedulers.PopulationBasedTrainingReplay(policy_file)`) reads
it and builds this struct from what it read, which a log then holds.

Deviations from Ray: the config the schedule starts with is the param
space (`tunecore.api.mutation_space` puts it there: a hook cannot change a
config); the perturbed tag names the config's leaves by path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Self

import msgspec

from tunecore.core.checkpoints import newest_persistent
from tunecore.core.results import flatten
from tunecore.core.schedulers.base import (
    CONTINUE,
    Exploit,
    FirstComeFirstServed,
    Fits,
    Verdict,
    evolve,
    first_fitting,
)
from tunecore.core.schedulers.pbt import tag_with_values
from tunecore.model import Decision, InvalidFieldError, JsonDict, Mode, TrialState, TrialStatus
from tunecore.model.numbers import is_number

_OWNER = "PopulationBasedTrainingReplay"
_ITERATION = "training_iteration"


class PolicyChange(msgspec.Struct, frozen=True, array_like=True):
    """From training iteration `step` on, the trial trains with `config`."""

    step: int
    config: JsonDict


def policy_changes(text: str, source: str = "") -> tuple[JsonDict, tuple[PolicyChange, ...]]:
    """The first config and the changes of a policy file's `text` (Ray's
    `_load_policy`); `source` names the file in errors."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            row = None
        if not (isinstance(row, list) and len(row) == 6):
            raise InvalidFieldError(
                f"{_OWNER}.policy_file line {number}",
                source or line,
                "a PBT policy file: JSON lines [tag, donor tag, iteration, donor iteration, "
                "old config, new config]",
            )
        rows.append(row)
    changes: list[PolicyChange] = []
    first: JsonDict = {}
    last_new_tag = None
    for old_tag, new_tag, _old_step, new_step, old_config, new_config in reversed(rows):
        if last_new_tag is not None and old_tag != last_new_tag:
            break  # the chain ended: older changes were overwritten
        last_new_tag = new_tag
        first = old_config
        changes.append(PolicyChange(int(new_step), new_config))
    return first, tuple(reversed(changes))


class PopulationBasedTrainingReplay(
    msgspec.Struct, FirstComeFirstServed, frozen=True, kw_only=True, tag=True
):
    """Trains one trial along a PBT schedule; see the module docstring.

    Configuration: the file it was read from, the first `config`, the
    `changes` and the `experiment_tag` of the replayed trial. The rest is
    state: the trial, the next change, whether one is under way, the step
    last seen and the changes made.
    """

    policy_file: str
    config: JsonDict
    changes: tuple[PolicyChange, ...] = ()
    experiment_tag: str = ""
    trial_id: str | None = None
    next_change: int = 0
    changing: bool = False
    current_step: int = 0
    num_perturbations: int = 0

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """The replay ranks nothing: it needs no metric."""
        del metric, mode
        return self

    def on_trial_add(self, trial: TrialState) -> Self:
        if self.trial_id is not None:
            raise InvalidFieldError(
                f"{_OWNER} trials",
                trial.trial_id,
                "one trial: a replay trains one schedule (set num_samples=1)",
            )
        return evolve(self, trial_id=trial.trial_id)

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        """At the next change's iteration: pause with a persistent save,
        to take the new config from there (`waiting_exploits`)."""
        del trials
        step = result.get(_ITERATION)
        if trial.trial_id != self.trial_id or not is_number(step):
            return self, CONTINUE
        if self.next_change >= len(self.changes):
            return self, CONTINUE
        replay = evolve(self, current_step=int(step))
        if step < self.changes[self.next_change].step:
            return replay, CONTINUE
        replay = evolve(replay, changing=True)
        return replay, Verdict(decision=Decision.PAUSE, checkpoint=True)

    def waiting_exploits(
        self, trials: Mapping[str, TrialState]
    ) -> tuple[tuple[str, Exploit | None], ...]:
        """The change under way, once the trial's save is in."""
        if not self.changing or self.trial_id is None:
            return ()
        trial = trials.get(self.trial_id)
        if trial is None or trial.is_finished:
            return ((self.trial_id, None),)
        if trial.status is not TrialStatus.PAUSED or trial.saving_to:
            return ()
        checkpoint = newest_persistent(trial.checkpoints)
        if checkpoint is None:
            return ((self.trial_id, None),)
        config = self.changes[self.next_change].config
        exploit = Exploit(
            donor_id=self.trial_id,
            config=config,
            experiment_tag=tag_with_values(self.experiment_tag, config, flatten(config)),
            restore_from=checkpoint,
        )
        return ((self.trial_id, exploit),)

    def on_waiting_exploit(self, trial_id: str, exploit: Exploit | None) -> Self:
        del trial_id
        made = self.num_perturbations + (exploit is not None)
        return evolve(
            self, changing=False, next_change=self.next_change + 1, num_perturbations=made
        )

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """FIFO, but not the trial while a change is under way."""
        if not self.changing:
            return first_fitting(pending, paused, fits)
        return first_fitting(
            pending, paused, lambda trial: trial.trial_id != self.trial_id and fits(trial)
        )

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        del trial, result
        return self

    def on_trial_error(self, trial: TrialState) -> Self:
        del trial
        return self

    def on_trial_remove(self, trial: TrialState) -> Self:
        del trial
        return self

    def debug_string(self) -> str:
        return (
            f"PopulationBasedTraining replay: Step {self.current_step}, "
            f"perturb {self.num_perturbations}"
        )
