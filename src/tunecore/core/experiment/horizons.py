"""How far a worker may train on without the driver: the `until` of the
commands that hand a worker training.

`step` fills it in on every `StartTrial`, `ContinueTrial`, `ResetTrial`
and `ChainTrials` it returns, from the state it ends in, so the shell
carries it out as it comes and never asks the core afterwards. The
lifecycle, which decides those commands one trial at a time, cannot: the
horizon is the scheduler's and the experiment's to say.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from tunecore.core.experiment.state import ExperimentState
from tunecore.core.schedulers.base import declared_horizon
from tunecore.model import ChainTrials, Command, ContinueTrial, ResetTrial, StartTrial
from tunecore.model.decision import Horizon


def run_ahead_until(state: ExperimentState, trial_id: str) -> Horizon | None:
    """Up to where a running trial's worker may train on without the
    driver's answers: until a result whose flattened `key` reaches
    `threshold`, every decision `step` makes on the trial's results is
    CONTINUE but for the trial's own stopping criterion (`check_stop`),
    which the worker checks itself. That needs a scheduler whose class
    says so itself (`schedulers.base.DecidesAt`: FIFO forever, ASHA's
    stopping variant until the next milestone; a subclass may decide
    more), no built-in stopper (it watches results across trials) and no
    checkpoint due at a frequency. None: every result waits for its answer.
    The Ray executor's run-ahead rests on this; stoppers of the user's own
    (shell) rule it out too, which the shell checks."""
    if state.stopper is not None:
        return None
    trial = state.trials.get(trial_id)
    if trial is None or trial.spec.checkpoint_policy.frequency:
        return None
    return declared_horizon(state.scheduler, trial_id)


def _continued(state: ExperimentState, command: ContinueTrial) -> ContinueTrial:
    """The common case: a result, and its trial goes on."""
    trial_id = command.trial_id
    return ContinueTrial(trial_id=trial_id, until=run_ahead_until(state, trial_id))


def with_horizons(state: ExperimentState, commands: Sequence[Command]) -> tuple[Command, ...]:
    """`commands` with the run-ahead horizon of `state` on each that hands
    a worker training (a chain's, one per chained trial)."""
    if len(commands) == 1:  # most steps: a result, and its trial goes on
        only = commands[0]
        if type(only) is ContinueTrial:
            return (_continued(state, only),)
        return (_with_horizon(state, only),)
    return tuple([_with_horizon(state, command) for command in commands])


def _with_horizon(state: ExperimentState, command: Command) -> Command:
    if isinstance(command, ContinueTrial):
        return _continued(state, command)
    if isinstance(command, StartTrial | ResetTrial):
        return msgspec.structs.replace(command, until=run_ahead_until(state, command.trial_id))
    if isinstance(command, ChainTrials):
        until = tuple(run_ahead_until(state, chained) for chained in command.then)
        return msgspec.structs.replace(command, until=until)
    return command
