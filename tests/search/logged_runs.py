"""What the searcher tests check against an experiment's log: a searcher
rebuilt from the log (as `Tuner.restore` rebuilds it, from the logged spec
or from the object the user passes again) repeats every suggestion the run
logged after the cut; and the simulated experiments they log."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

import tunecore
from tests.search.flat_space import SPACE, simulated_loss
from tunecore import RunConfig, TuneConfig
from tunecore.api.searching import restored_runtime
from tunecore.core.experiment import ExperimentState
from tunecore.core.experiment.snapshot import BUILTIN, decode_state
from tunecore.model import Asked, ExperimentEvent, JsonDict
from tunecore.search import Searcher
from tunecore.shell.eventlog import read_log
from tunecore.shell.replay import HistoryWalk, walk
from tunecore.shell.searchers import SearchResumeWarning


def assert_a_rebuilt_searcher_repeats_every_logged_suggestion(
    experiment: Path, cut: float = 0.5, given: object = None
) -> int:
    """Cut the experiment's log at the fraction `cut` of its events, rebuild
    its searcher from what comes before (from its spec, or from `given`, the
    searcher built again as `Tuner.restore(..., search_alg=given)` takes it;
    with no `SearchResumeWarning`), and ask it again for every suggestion
    after the cut: each must be the logged one (a config, nothing now, or
    `Searcher.FINISHED`). Returns how many suggestions
    the log holds."""
    contents = read_log(experiment)
    asks: list[tuple[ExperimentState, Asked]] = []

    def visit(before: ExperimentState, event: ExperimentEvent, _: ExperimentState) -> None:
        if isinstance(event, Asked):
            asks.append((before, event))

    walk(contents, BUILTIN, visit)
    prefix = dataclasses.replace(
        contents, events=contents.events[: int(cut * len(contents.events))]
    )
    states: list[ExperimentState] = []
    walk(prefix, BUILTIN, lambda _b, _e, after: states.append(after))
    at_cut = states[-1] if states else decode_state(contents.header.initial_state, BUILTIN)
    done = sum(isinstance(event, Asked) for event in prefix.events)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchResumeWarning)
        history = HistoryWalk(prefix)
        runtime = restored_runtime(history, at_cut.searcher, given, None)
        history.run()
        assert runtime is not None
        for before, event in asks[done:]:
            got = runtime.replay_ask(before, event)
            logged = Searcher.FINISHED if event.finished else event.config
            assert msgspec.json.encode(got) == msgspec.json.encode(logged)
    return len(asks)


def simulated_asks(
    search_alg: object,
    experiment: Path,
    *,
    samples: int,
    seed: int,
    iterations: int = 1,
    space: Mapping[str, Any] = SPACE,
    trainable: Callable[[JsonDict, int], tuple[JsonDict, float]] = simulated_loss,
) -> list[JsonDict | None]:
    """Simulate `samples` trials of `trainable` over `space` (minimising
    "loss") with `search_alg` into the directory `experiment`; every trial
    must end without error. The configs its log asked, in order."""
    grid = tunecore.simulate(
        trainable,
        param_space=dict(space),
        tune_config=TuneConfig(
            search_alg=search_alg, metric="loss", mode="min", num_samples=samples, seed=seed
        ),
        run_config=RunConfig(storage_path=str(experiment.parent), name=experiment.name, verbose=0),
        max_iterations=iterations,
    )
    assert len(grid) == samples
    assert not grid.errors
    return [event.config for event in read_log(experiment).events if isinstance(event, Asked)]
