"""Result events per second through the pure `step`, and how the cost per
event grows with the number of trials in the experiment.

Every trial is RUNNING (the cluster has a CPU for each), events are built
before the clock starts, and every event is checked to be accepted, so the
numbers measure `step` alone. Time is the process's CPU time
(`time.process_time`: `step` is single-threaded, and CPU time does not count
the moments another process holds the core), each case is run `repeats`
times and the best run is kept: the machine is shared and noisy, and the
minimum is the least disturbed measurement.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from functools import partial

from tunecore.core.experiment import ExperimentConfig, ExperimentState, new_experiment, step
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.model import (
    ClusterResourcesChanged,
    Mode,
    Rejection,
    Resources,
    ResultReported,
    StopRequested,
    TrialRequested,
    TrialStatus,
)
from tunecore.model.codec import to_msgpack


def running_experiment(
    trials: int, scheduler: TrialScheduler, running: int | None = None
) -> ExperimentState:
    """An experiment of `trials` trials of which `running` (all by default)
    are RUNNING; the others were stopped and are TERMINATED."""
    config = ExperimentConfig(trainable_name="bench", metric="loss", mode=Mode.MIN)
    state = new_experiment(config, scheduler)
    stepped = step(state, ClusterResourcesChanged(at=0.0, total=Resources(cpu=float(trials))))
    assert not isinstance(stepped, Rejection)
    state = stepped[0]
    for number in range(trials):
        stepped = step(state, TrialRequested(at=0.0, config={"x": number}))
        assert not isinstance(stepped, Rejection)
        state = stepped[0]
    keep = trials if running is None else running
    for number in range(keep, trials):
        stepped = step(state, StopRequested(trial_id=f"trial_{number:05d}", at=0.0))
        assert not isinstance(stepped, Rejection)
        state = stepped[0]
    assert state.running == keep
    return state


def never_stopping_asha() -> ASHAScheduler:
    """ASHA doing all its work (rungs at 1, 4, 16, ... iterations, cutoffs
    computed at each) but stopping nobody: every trial reports the same loss,
    and a score equal to the cutoff continues. So every event stays legal."""
    return ASHAScheduler(metric="loss", mode=Mode.MIN, max_t=10**9, grace_period=1)


def result_events(state: ExperimentState, count: int) -> list[ResultReported]:
    """`count` results, round robin over the running trials, iterations
    counting up."""
    ids = [t for t, trial in state.trials.items() if trial.status is TrialStatus.RUNNING]
    ids.sort()
    return [
        ResultReported(
            trial_id=ids[n % len(ids)],
            at=1.0 + n,
            result={"training_iteration": n // len(ids) + 1, "loss": 0.5, "acc": 0.9},
        )
        for n in range(count)
    ]


def time_events(state: ExperimentState, events: Sequence[ResultReported]) -> float:
    """Seconds to step through `events`; fails if any is rejected."""
    gc.collect()
    start = time.process_time()
    for event in events:
        stepped = step(state, event)
        if isinstance(stepped, Rejection):
            raise AssertionError(f"benchmark event rejected: {stepped}")
        state = stepped[0]
    return time.process_time() - start


def best_rate(
    make_state: Callable[[], ExperimentState], count: int, repeats: int
) -> tuple[float, float]:
    """(events per second, microseconds per event), best of `repeats`."""
    state = make_state()
    events = result_events(state, count)
    seconds = min(time_events(state, events) for _ in range(repeats))
    return count / seconds, seconds / count * 1e6


def run(schedulers: dict[str, Callable[[], TrialScheduler]], quick: bool = False) -> str:
    """The benchmark tables as Markdown."""
    count = 20_000 if quick else 200_000
    repeats = 2 if quick else 3
    lines = [
        f"### Result events through `step` ({count:,} events, best of {repeats})",
        "",
        "| scheduler | trials | events/s | µs/event |",
        "|---|---:|---:|---:|",
    ]
    for name, make in schedulers.items():
        rate, micros = best_rate(partial(running_experiment, 100, make()), count, repeats)
        lines.append(f"| {name} | 100 | {rate:,.0f} | {micros:.2f} |")
    lines += [
        "",
        "### Cost per event by experiment size (FIFO)",
        "",
        "Results go to 100 running trials; the rest of the experiment's trials",
        "are finished. The last column sends results round robin to *every*",
        "trial, all running: each event then touches memory no cache holds, so",
        "it measures the machine's memory more than `step`.",
        "",
        "| trials | µs/event | ratio to 100 trials | all running: µs/event | ratio |",
        "|---:|---:|---:|---:|---:|",
    ]
    sizes = (100, 10_000) if quick else (100, 10_000, 100_000)
    baseline = baseline_all = 0.0
    for size in sizes:
        experiment = partial(running_experiment, size, FIFOScheduler(), 100)
        _, micros = best_rate(experiment, count, repeats)
        everyone = partial(running_experiment, size, FIFOScheduler())
        _, micros_all = best_rate(everyone, count, repeats)
        baseline = baseline or micros
        baseline_all = baseline_all or micros_all
        lines.append(
            f"| {size:,} | {micros:.2f} | {micros / baseline:.2f}x "
            f"| {micros_all:.2f} | {micros_all / baseline_all:.2f}x |"
        )
    return "\n".join(lines)


def snapshot_size(state: ExperimentState) -> int:
    """Bytes of the trials of `state` as msgpack (used by the size report)."""
    return len(to_msgpack(list(state.trials.values())))
