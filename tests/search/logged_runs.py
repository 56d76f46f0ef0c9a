"""What the searcher tests check against an experiment's log: a searcher
rebuilt from the log (as `Tuner.restore` rebuilds it, from the logged spec
or from the object the user passes again) repeats every suggestion the run
logged after the cut."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import msgspec

from tunecore.api.searching import restored_runtime
from tunecore.core.experiment import ExperimentState
from tunecore.core.experiment.snapshot import BUILTIN, decode_state
from tunecore.model import Asked, ExperimentEvent
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
