"""`tunecore.simulate`: a whole experiment over known learning curves, in
virtual time, in this process.

The trainable is a pure function `(config, iteration) -> (metrics, seconds)`;
everything else is what `Tuner.fit` does (the same core, loop, event log and
snapshots), with the `SimulatedExecutor` in place of workers and its virtual
clock in place of the wall clock. Trial ids are derived from the seed, so
the same seed gives the same event log, byte for byte: replay it, diff it,
or resume it like any other. Per-trial result files are off by default (the
log holds every result; 10 000 trials would mean 20 000 files).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping

from tunecore.api.config import RunConfig, TuneConfig
from tunecore.api.results import ResultGrid
from tunecore.api.tuner import RunParts, with_parts
from tunecore.model import JsonDict, Resources
from tunecore.shell.eventlog import SIMULATED
from tunecore.shell.executors.simulated import SimulatedExecutor, SimulatedTrainable


def _unused_trainable(config: dict[str, object]) -> None:
    """Stands in for the user's trainable in `Tuner`'s checks: a simulation
    never runs a trainable the real way."""


def simulate(
    trainable: SimulatedTrainable,
    *,
    param_space: Mapping[str, object] | None = None,
    tune_config: TuneConfig | None = None,
    run_config: RunConfig | None = None,
    cluster: Resources | None = None,
    max_iterations: int | None = None,
    start_time: float = 0.0,
    start_seconds: float = 0.0,
    save_seconds: float = 0.0,
    write_results: bool = False,
    fresh_on_resume: Callable[[JsonDict], bool] | None = None,
) -> ResultGrid:
    """Run an experiment of `trainable` over `param_space` in virtual time.

    `cluster` is what the simulated cluster has (default: 8 CPUs);
    `max_iterations` ends a trial with `done` at that iteration (a stopping
    criterion or a scheduler's `max_t` does too); `start_seconds` and
    `save_seconds` are what starting a worker and saving a checkpoint cost
    on the virtual clock. A trial whose config `fresh_on_resume` holds for
    begins again from its first iteration when a pause ends, as a function
    trainable without a checkpoint does. Progress output is off unless
    `run_config` sets `verbose`."""
    executor = SimulatedExecutor(
        trainable,
        resources=cluster if cluster is not None else Resources(cpu=8),
        start_time=start_time,
        max_iterations=max_iterations,
        start_seconds=start_seconds,
        save_seconds=save_seconds,
        fresh_on_resume=fresh_on_resume,
    )
    seed = tune_config.seed if tune_config is not None and tune_config.seed is not None else 0
    parts = RunParts(
        executor=executor,
        executor_kind=SIMULATED,
        clock=executor.now,
        # Ids from the seed: the same seed gives the same log, byte for byte.
        trial_id_prefix=hashlib.blake2b(str(seed).encode(), digest_size=3).hexdigest()[:5],
        trainable_name=f"{trainable.__module__}:{trainable.__qualname__}",
        write_results=write_results,
    )
    tuner = with_parts(
        parts,
        _unused_trainable,
        param_space=param_space,
        tune_config=tune_config or TuneConfig(),
        run_config=_quiet_unless_asked(run_config),
    )
    return tuner.fit()


def _quiet_unless_asked(run_config: RunConfig | None) -> RunConfig:
    """`run_config` with progress output off unless it sets `verbose`:
    naming the experiment or its storage asks for no status table, and a
    simulation is mostly run from tests and what-ifs, whose output it would
    fill."""
    if run_config is None:
        return RunConfig(verbose=0)
    if "verbose" in run_config.model_fields_set:
        return run_config
    return run_config.model_copy(update={"verbose": 0})
