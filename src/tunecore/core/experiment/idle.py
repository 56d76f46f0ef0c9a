"""Which `Tick`s an idle experiment logs.

When a round of the shell's loop brings no event (every trial is inside a
long step), time has still passed, and a `Tick` tells the core so. Most
such Ticks change nothing: logged, they were a record a second of nothing
(3,400 an idle hour), each replayed and each read back by every resume. A
Tick is logged, and fed to `step`, only when it can change a decision:

- its step gives a command or changes the state in anything but `now`
  (the time budget or a `TimeoutStopper` runs out, the searcher or the
  scheduler is asked again, a trial starts): found by stepping it, so no
  rule here can drift from what `step` does;
- or the experiment's decisions read the time it has run
  (`time_budget_s`, a `TimeoutStopper`) and `HEARTBEAT_S` passed since the
  last logged event: `now` is all a resume knows of when the driver went
  away (`ExperimentResumed` counts the time since as down time, not run
  time), so a driver killed while idle hands the resume at most that much
  budget again. Ray Tune likewise loses the time since its last
  experiment checkpoint (every 10 s or more).

A Tick left out changes nothing later either: the state it would have
made differs only in `now`, which every next event overwrites and only
`ExperimentResumed` reads (above). So replay of the shorter log computes
exactly what the live run did, and an old log, which holds every Tick,
replays as it ran.
"""

from __future__ import annotations

from tunecore.core.experiment.state import ExperimentState
from tunecore.core.experiment.step import step
from tunecore.core.stoppers import times_out
from tunecore.model import Rejection, Tick

HEARTBEAT_S = 10.0
"""How long an idle experiment that reads its run time goes without a
logged event: the most run time a resume after a crash can miss."""


def tick_to_log(state: ExperimentState, at: float, heartbeat_s: float = HEARTBEAT_S) -> Tick | None:
    """The `Tick` to log and feed at `at` when a round brought no event, or
    None when it would change no decision (module docstring)."""
    tick = Tick(at=at)
    stepped = step(state, tick)
    if isinstance(stepped, Rejection):  # the experiment is over: nothing to tell it
        return None
    after, commands = stepped
    if commands or not _same_but_now(state, after):
        return tick
    if _reads_run_time(state) and at - state.now >= heartbeat_s:
        return tick
    return None


def _reads_run_time(state: ExperimentState) -> bool:
    """Whether a decision of the experiment depends on how long it has run."""
    return state.config.time_budget_s is not None or times_out(state.stopper)


def _same_but_now(before: ExperimentState, after: ExperimentState) -> bool:
    """Whether `after` holds what `before` does in every field but `now`
    (the same object, or an equal one: a step rebuilds its bookkeeping)."""
    for name in ExperimentState.__struct_fields__:
        if name == "now":
            continue
        old, new = getattr(before, name), getattr(after, name)
        if old is not new and old != new:
            return False
    return True
