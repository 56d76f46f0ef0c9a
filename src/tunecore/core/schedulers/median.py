"""The median stopping rule, as Ray Tune implements it.

Theory of operation (Golovin et al. 2017, "Google Vizier", section 3.2.2):
a trial that, by time `t`, has not reached the median of what the other
trials had reached on average by `t` is unlikely to end up best, so it can
give its resources back. Concretely, on a result at time `t`:

1. before `grace_period` every trial continues;
2. the reference population is every OTHER trial whose latest recorded time
   is at least `t` (finished and stopped trials included: their history is
   still evidence);
3. each of them contributes its running mean of the metric over its results
   with `grace_period <= time <= t`;
4. with fewer than `min_samples_required` contributions the rule cannot
   judge: the trial continues, or yields (PAUSE) when others are waiting and
   it has run more than `min_time_slice` since it last yielded;
5. otherwise the trial's best value so far (all its results, the grace
   period included) is compared with the median of those means; strictly
   worse means STOP (`hard_stop`) or PAUSE, and the trial is never judged
   again (later results, after a resume, get CONTINUE: Ray's FIFO fallback).

Invariants:

- `samples[id]` holds, in arrival order, every (time, value) a trial
  reported with both attributes numeric and not NaN, except results arriving
  after the rule stopped or paused it (the rule no longer looks at them).
- `stopped` only grows, in the order the rule gave up on trials; a trial in
  it gets CONTINUE forever.
- `pauses[id]` is the time of the trial's latest yield (step 4); it only
  changes when the rule answers that PAUSE.
- Both are persistent maps (`ShardedMap`): a result copies one shard, not
  every trial's samples. A judgement still reads every other trial (step 2
  defines the rule over all of them), so the cost of a result grows with
  the trials anyway; the copy was under 1% of it at 10,000 trials. Rules
  written before these fields kept the same data in the dicts `results` and
  `last_pause`; decoding moves it over, and nothing writes them again.
- Decisions depend on these fields and the hooks' arguments only, so a rule
  decoded from msgpack continues exactly as the live one would.

Deviations from Ray (python/ray/tune/schedulers/median_stopping_rule.py),
each because Ray's behaviour there is an accident rather than a rule:

- A reference trial with no result inside `[grace_period, t]` (it jumped
  over the window) has no running mean at `t`; Ray averages an empty list
  (NaN), which makes the median NaN and stops the trial being judged. Here
  such a trial neither contributes nor counts towards `min_samples_required`.
- A result whose time or metric is not a number, or is NaN, is ignored
  (CONTINUE, not recorded), as Ray ignores results missing either key.
- `on_trial_complete` does not record the final result twice when the
  experiment already passed it to `on_trial_result` (same time and value as
  the latest recorded sample).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Self

import msgspec

from tunecore.core.persistent import ShardedMap
from tunecore.core.schedulers.base import (
    CONTINUE,
    PAUSE,
    STOP,
    FirstComeFirstServed,
    Verdict,
    adopt_objective,
    check_objective_fields,
    evolve,
    require_objective,
    signed,
)
from tunecore.model import JsonDict, Mode, ModeArg, TrialState, TrialStatus
from tunecore.model.errors import (
    require_bool,
    require_finite_non_negative,
    require_int,
)
from tunecore.model.numbers import is_number

_OWNER = "MedianStoppingRule"
_WAITING = (TrialStatus.PENDING, TrialStatus.PAUSED)


class Sample(msgspec.Struct, frozen=True, array_like=True):
    """One recorded result: the trial's time and its metric value."""

    time: float
    value: float


class MedianStoppingRule(msgspec.Struct, FirstComeFirstServed, frozen=True, kw_only=True, tag=True):
    """Stops (or pauses) trials whose best result is worse than the median of
    the other trials' running means at the same time.

    Configuration: `time_attr` names the monotonically increasing progress
    measure, `metric`/`mode` the objective (None until `with_objective`),
    `grace_period` the time before which no trial is judged,
    `min_samples_required` how many other trials a median needs,
    `min_time_slice` how long a trial runs between yields while the rule
    cannot judge it, `hard_stop` whether a judged trial stops or pauses.
    State: see the module docstring.
    """

    time_attr: str = "time_total_s"
    metric: str | None = None
    mode: ModeArg | None = None
    grace_period: float = 60.0
    min_samples_required: int = 3
    min_time_slice: float = 0
    hard_stop: bool = True
    results: dict[str, tuple[Sample, ...]] = {}
    last_pause: dict[str, float] = {}
    stopped: tuple[str, ...] = ()
    samples: ShardedMap[str, tuple[Sample, ...]] = ShardedMap()
    pauses: ShardedMap[str, float] = ShardedMap()

    def __post_init__(self) -> None:
        if self.results or self.last_pause:  # written before `samples` and `pauses`
            samples, pauses = self.samples, self.pauses
            for trial_id, history in self.results.items():
                samples = samples.set(trial_id, history)
            for trial_id, time in self.last_pause.items():
                pauses = pauses.set(trial_id, time)
            for name, value in (("samples", samples), ("pauses", pauses)):
                msgspec.structs.force_setattr(self, name, value)
            for name in ("results", "last_pause"):
                msgspec.structs.force_setattr(self, name, {})
        check_objective_fields(self, self.time_attr, self.metric, self.mode)
        require_finite_non_negative(f"{_OWNER}.grace_period", self.grace_period)
        require_int(f"{_OWNER}.min_samples_required", self.min_samples_required, minimum=1)
        require_finite_non_negative(f"{_OWNER}.min_time_slice", self.min_time_slice)
        require_bool(f"{_OWNER}.hard_stop", self.hard_stop)

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Fill in the experiment's metric and mode where none was given;
        the rule cannot rank results without both."""
        return adopt_objective(self, (self.metric, self.mode), metric, mode)

    def on_trial_add(self, trial: TrialState) -> Self:
        """Nothing to record yet; fail now, as Ray does, rather than at the
        first result when the objective is missing."""
        del trial
        require_objective(_OWNER, self.metric, self.mode)
        return self

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        """Record the result, then judge the trial (steps 1-5 above)."""
        metric, mode = require_objective(_OWNER, self.metric, self.mode)
        sample = _sample(result, self.time_attr, metric)
        trial_id = trial.trial_id
        if sample is None or trial_id in self.stopped:
            return self, CONTINUE
        history = (*(self.samples.get(trial_id) or ()), sample)
        rule = evolve(self, samples=self.samples.set(trial_id, history))
        now = sample.time
        if now < self.grace_period:
            return rule, CONTINUE
        means = rule.reference_means(trial_id, now)
        if len(means) < self.min_samples_required:
            if rule._should_yield(trial_id, now, trials):
                pauses = rule.pauses.set(trial_id, now)
                return msgspec.structs.replace(rule, pauses=pauses), PAUSE
            return rule, CONTINUE
        best = max(signed(s.value, mode) for s in history)
        if best < signed(statistics.median(means), mode):
            rule = msgspec.structs.replace(rule, stopped=(*rule.stopped, trial_id))
            return rule, STOP if self.hard_stop else PAUSE
        return rule, CONTINUE

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        """A finished trial's history keeps counting in other trials'
        medians, so its last result is recorded too."""
        metric, _ = require_objective(_OWNER, self.metric, self.mode)
        sample = _sample(result, self.time_attr, metric)
        history = self.samples.get(trial.trial_id) or ()
        if sample is None or (history and history[-1] == sample):
            return self
        return msgspec.structs.replace(
            self, samples=self.samples.set(trial.trial_id, (*history, sample))
        )

    def on_trial_error(self, trial: TrialState) -> Self:
        """What an errored trial reported stays evidence, as in Ray."""
        del trial
        return self

    def on_trial_remove(self, trial: TrialState) -> Self:
        del trial
        return self

    def debug_string(self) -> str:
        return f"Using MedianStoppingRule: num_stopped={len(self.stopped)}."

    def reference_means(self, trial_id: str, now: float) -> list[float]:
        """The running means at `now` of the other trials that reached it
        (steps 2 and 3), in no order the median depends on."""
        means = []
        for other_id, samples in self.samples.items():
            if other_id == trial_id or samples[-1].time < now:
                continue
            mean = running_mean(samples, self.grace_period, now)
            if mean is not None:
                means.append(mean)
        return means

    def _should_yield(self, trial_id: str, now: float, trials: Mapping[str, TrialState]) -> bool:
        """Ray's `_on_insufficient_samples`: give the resources to a waiting
        trial, at most once per `min_time_slice` of this trial's time."""
        last = self.pauses.get(trial_id)
        last = -math.inf if last is None else last
        if now - last <= self.min_time_slice:
            return False
        return any(t.status in _WAITING for t in trials.values() if t.trial_id != trial_id)


def running_mean(samples: Sequence[Sample], grace_period: float, now: float) -> float | None:
    """The mean value over the samples with `grace_period <= time <= now`,
    or None when there are none."""
    values = [s.value for s in samples if grace_period <= s.time <= now]
    if not values:
        return None
    return math.fsum(values) / len(values)


def _sample(result: JsonDict, time_attr: str, metric: str) -> Sample | None:
    time = result.get(time_attr)
    value = result.get(metric)
    if not (is_number(time) and is_number(value)):
        return None
    sample = Sample(time=float(time), value=float(value))
    if math.isnan(sample.time) or math.isnan(sample.value):
        return None
    return sample
