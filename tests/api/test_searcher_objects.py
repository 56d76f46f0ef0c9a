"""Ray Tune style searcher objects (`tunecore.search.Searcher`) in an
experiment, from the outside: what they suggest runs, what they are told
arrives in log order, their failures end the experiment cleanly, a log
replays without them, and a restore rebuilds them exactly."""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tunecore
from tests.crashes import Crash, CrashAfterTrials
from tunecore import RunConfig, TuneConfig, TuneError, Tuner
from tunecore.api.searching import SearcherNotGivenError, restored_runtime
from tunecore.core.experiment import ExperimentState
from tunecore.core.experiment.snapshot import BUILTIN
from tunecore.core.search.external import ExternalSearcher
from tunecore.model import Asked, ExperimentEvent, JsonDict, ResultReported, SearcherFailed
from tunecore.search import ConcurrencyLimiter, Repeater, Searcher
from tunecore.shell.eventlog import read_log
from tunecore.shell.replay import HistoryWalk, replay, walk
from tunecore.shell.searchers import SearchResumeWarning, external_of


class Hill(Searcher):
    """Climbs from the best x it was told, with a seeded RNG: what it
    suggests depends on every tell and on their order, and it rebuilds
    from its spec. It names the runs' metric and mode itself: these runs
    have no param space, and Ray's tune.run offers a searcher the run's
    metric and mode only with one (`set_search_properties`)."""

    def __init__(
        self, metric: str | None = "score", mode: str | None = "max", seed: int | None = None
    ) -> None:
        super().__init__(metric=metric, mode=mode)
        self.seed = seed
        self.rng: random.Random | None = None
        self.best: float | None = None
        self.told: list[str] = []
        self.added: list[dict[str, Any]] = []
        self.suggested: dict[str, float] = {}

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any
    ) -> bool:
        self._metric = self._metric or metric
        self._mode = self._mode or mode
        return True

    def use_seed(self, seed: int) -> None:
        if self.seed is None:
            self.seed = seed

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        if self.rng is None:
            self.rng = random.Random(self.seed)
        start = 0.0 if self.best is None else self.best
        self.suggested[trial_id] = round(start + self.rng.uniform(-1.0, 1.0), 9)
        return {"x": self.suggested[trial_id]}

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        self.told.append(trial_id)
        if result is None or error:
            return
        score = result[self.metric]
        better = self.best is None or (score > self._score(self.best))
        if better:  # a Repeater tells the group's mean score alone, under its first trial
            self.best = self.suggested[trial_id]

    def _score(self, x: float) -> float:
        return -((x - 3.0) ** 2)

    def add_evaluated_point(
        self,
        parameters: dict[str, Any],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        self.added.append({"parameters": parameters, "value": value, "error": error})
        if not error and (self.best is None or value > self._score(self.best)):
            self.best = parameters["x"]

    def to_spec(self) -> JsonDict | None:
        return {"metric": self.metric, "mode": self.mode, "seed": self.seed}

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Hill:
        return cls(spec["metric"], spec["mode"], spec["seed"])  # type: ignore[arg-type]


def parabola(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    """A simulated trainable: score peaks at x = 3; later iterations take longer."""
    x = config["x"]
    assert isinstance(x, float)
    return {"score": -((x - 3.0) ** 2), "x": x}, 1.0 + abs(x) % 1.0


def x_of(config: JsonDict) -> float:
    x = config["x"]
    assert isinstance(x, float)
    return x


def simulated(
    searcher: object, tmp_path: Path, *, samples: int = 8, seed: int = 0, name: str = "sim"
) -> tunecore.ResultGrid:
    return tunecore.simulate(
        parabola,
        tune_config=TuneConfig(
            search_alg=searcher, metric="score", mode="max", num_samples=samples, seed=seed
        ),
        run_config=RunConfig(storage_path=str(tmp_path), name=name, verbose=0),
        max_iterations=2,
    )


def asked(experiment_dir: Path) -> list[Asked]:
    return [e for e in read_log(experiment_dir).events if isinstance(e, Asked)]


def test_each_trial_runs_what_the_searcher_suggested_and_it_hears_every_end(
    tmp_path: Path,
) -> None:
    hill = Hill()
    grid = simulated(ConcurrencyLimiter(hill, max_concurrent=2), tmp_path)
    logged = asked(tmp_path / "sim")
    assert len(grid) == 8
    assert [r.config for r in grid] == [e.config for e in logged]
    assert sorted(hill.told) == sorted(str(r.metrics["trial_id"]) for r in grid)
    # Ray's SearchGenerator tags: a 1-based count, then the config's values.
    assert grid.trials[0].experiment_tag == f"1_x={grid[0].config['x']:.5}"
    assert grid.trials[7].experiment_tag.startswith("8_x=")


def test_a_log_replays_without_the_searcher(tmp_path: Path) -> None:
    simulated(Hill(), tmp_path)
    replayed = replay(tmp_path / "sim")
    assert replayed.state.done
    assert replayed.rejected == 0
    assert replayed.state.finished == 8


def test_the_same_seed_gives_the_same_log_bytes_with_eight_concurrent(tmp_path: Path) -> None:
    for run in ("a", "b"):
        limited = ConcurrencyLimiter(Hill(), max_concurrent=8)
        simulated(limited, tmp_path / run, seed=3)
    first = (tmp_path / "a" / "sim" / "events.log").read_bytes()
    assert first == (tmp_path / "b" / "sim" / "events.log").read_bytes()
    assert len(asked(tmp_path / "a" / "sim")) == 8


class Scripted(Searcher):
    """Answers each ask as its script says: a config, None, FINISHED, or
    an exception (then it answers with configs)."""

    def __init__(self, script: list[str]) -> None:
        super().__init__(metric="score", mode="max")
        self.script = list(script)
        self.completed = 0
        self.asks = 0

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        self.asks += 1
        action = self.script.pop(0) if self.script else "config"
        if action == "none":
            return None
        if action == "finished":
            return Searcher.FINISHED
        if action == "raise":
            raise RuntimeError("the optimizer broke")
        if action == "outside":
            return {"x": 99.0}
        return {"x": float(self.asks)}

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        self.completed += 1


def test_finished_ends_the_search_early(tmp_path: Path) -> None:
    searcher = Scripted(["config", "config", "finished"])
    grid = simulated(ConcurrencyLimiter(searcher, max_concurrent=1), tmp_path)
    assert len(grid) == 2
    assert not grid.errors
    assert searcher.completed == 2


def test_a_searcher_that_raises_stops_the_experiment_and_keeps_the_log(tmp_path: Path) -> None:
    """As in Ray Tune, fit() raises the searcher's error; unlike Ray, the
    experiment first ends cleanly, its log and results kept."""
    searcher = Scripted(["config", "config", "raise"])
    with pytest.raises(TuneError, match="The searcher failed: RuntimeError: the optimizer broke"):
        simulated(ConcurrencyLimiter(searcher, max_concurrent=1), tmp_path)
    events = read_log(tmp_path / "sim").events
    failures = [e for e in events if isinstance(e, SearcherFailed)]
    assert [f.error for f in failures] == ["RuntimeError: the optimizer broke"]
    grid = tunecore.ResultGrid.from_path(tmp_path / "sim")
    assert [r.metrics["score"] for r in grid] == [-4.0, -1.0]  # nothing recorded is lost
    assert grid.experiment_error is not None
    assert replay(tmp_path / "sim").state.done


def test_a_restore_runs_the_trial_a_raising_searcher_cut_short(tmp_path: Path) -> None:
    """As in Ray Tune: the trial running when the searcher raised (it never
    reported) is not ended by the failure; the restore, given the fixed
    searcher, runs it and asks for the rest."""

    def tuner(script: list[str]) -> Tuner:
        return Tuner(
            quadratic,
            tune_config=TuneConfig(
                search_alg=Scripted(script), metric="score", mode="max", num_samples=3
            ),
            run_config=RunConfig(
                storage_path=str(tmp_path), name="exp", verbose=0, executor="in_process"
            ),
        )

    with pytest.raises(TuneError, match=r"Tuner\.restore runs the trials it cut short again"):
        tuner(["config", "raise"]).fit()
    path = tmp_path / "exp"
    assert [e.resumable for e in read_log(path).events if isinstance(e, SearcherFailed)] == [True]
    trials = list(replay(path).state.trials.values())
    assert [t.is_finished for t in trials] == [False]
    restored = Tuner.restore(str(path), quadratic, search_alg=Scripted(["config"] * 3)).fit()
    assert sorted(r.config["x"] for r in restored) == [1.0, 2.0, 3.0]
    assert all(r.error is None and "score" in r.metrics for r in restored)


class BreaksOnAResult(Scripted):
    """Suggests as `Scripted` does; its `on_trial_result` raises on the
    result of trial x = 1.0 at `iteration`."""

    def __init__(self, iteration: int) -> None:
        super().__init__([])
        self.iteration = iteration
        self.results: list[tuple[float, int]] = []

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        self.results.append((result["x"], result["training_iteration"]))
        if (result["x"], result["training_iteration"]) == (1.0, self.iteration):
            raise RuntimeError(f"cannot take iteration {self.iteration}")


def test_a_searcher_whose_on_trial_result_raises_ends_the_run_at_that_result(
    tmp_path: Path,
) -> None:
    """As in Ray Tune, the error leaves fit() from the result it was told,
    not at the next ask; the trial it cut short is left to a restore, and
    nothing recorded is lost: the result it raised on is logged, and the
    failure right after it."""
    searcher = BreaksOnAResult(iteration=1)
    with pytest.raises(TuneError, match="The searcher failed: RuntimeError: cannot take"):
        simulated(ConcurrencyLimiter(searcher, max_concurrent=1), tmp_path, samples=3)
    assert searcher.results == [(1.0, 1)]  # told at once, and nothing after it raised
    events = read_log(tmp_path / "sim").events
    failed_at = next(i for i, e in enumerate(events) if isinstance(e, SearcherFailed))
    told = events[failed_at - 1]
    assert isinstance(told, ResultReported)
    assert told.result["training_iteration"] == 1
    assert not any(isinstance(e, ResultReported) for e in events[failed_at:])
    state = replay(tmp_path / "sim").state
    assert state.done
    trials = list(state.trials.values())
    assert [(t.is_finished, t.last_result["training_iteration"]) for t in trials] == [(False, 1)]
    grid = tunecore.ResultGrid.from_path(tmp_path / "sim")
    assert [r.metrics["training_iteration"] for r in grid] == [1]


def test_a_restore_runs_on_the_trial_a_raising_on_trial_result_cut_short(tmp_path: Path) -> None:
    def tuner(searcher: object) -> Tuner:
        return Tuner(
            quadratic,
            tune_config=TuneConfig(search_alg=searcher, metric="score", mode="max", num_samples=2),
            run_config=RunConfig(
                storage_path=str(tmp_path), name="exp", verbose=0, executor="in_process"
            ),
        )

    with pytest.raises(TuneError, match=r"cannot take iteration 1"):
        tuner(ConcurrencyLimiter(BreaksOnAResult(iteration=1), max_concurrent=1)).fit()
    fixed = BreaksOnAResult(iteration=0)
    restored = Tuner.restore(str(tmp_path / "exp"), quadratic, search_alg=fixed).fit()
    assert sorted(r.config["x"] for r in restored) == [1.0, 2.0]
    assert all(r.error is None for r in restored)
    # The rebuilt object heard the logged result, then the runs.
    assert fixed.results == [(1.0, 1), (1.0, 1), (2.0, 1)]


class ScriptedOverTheSpace(Scripted):
    """Takes the Tuner's param space (and then ignores it)."""

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any
    ) -> bool:
        return True


def test_a_suggestion_outside_the_param_space_names_the_parameter(tmp_path: Path) -> None:
    expected = r"ScriptedOverTheSpace\.suggest\(\)\['x'\]=99\.0 is invalid: .*Uniform"
    with pytest.raises(TuneError, match=expected):
        tunecore.simulate(
            parabola,
            param_space={"x": tunecore.uniform(-5.0, 5.0)},
            tune_config=TuneConfig(
                search_alg=ScriptedOverTheSpace(["config", "outside"]),
                metric="score",
                mode="max",
                num_samples=4,
            ),
            run_config=RunConfig(storage_path=str(tmp_path), name="sim", verbose=0),
            max_iterations=1,
        )


def test_a_searcher_that_declines_with_nothing_running_is_asked_again(tmp_path: Path) -> None:
    """As Ray's TuneController does (`_update_trial_queue(blocking=True)`):
    three answers of None, then the run goes on as if they were not."""
    searcher = Scripted(["none", "none", "none"])
    grid = simulated(searcher, tmp_path, samples=3)
    assert not grid.errors
    assert grid.experiment_error is None
    assert sorted(x_of(r.config) for r in grid) == [4.0, 5.0, 6.0]
    answers = asked(tmp_path / "sim")
    assert [a.config is None for a in answers] == [True, True, True, False, False, False]
    assert [a.at - answers[0].at for a in answers[:3]] == [0.0, 1.0, 2.0]  # Ray's 1 s apart
    assert replay(tmp_path / "sim").state.done


def test_a_searcher_that_always_declines_is_given_up_with_an_error(tmp_path: Path) -> None:
    """Where Ray would ask forever, silently: asked 25 times over about ten
    minutes (`core.search.declines`), then the dead end's error."""
    searcher = Scripted(["none"] * 100)
    grid = simulated(searcher, tmp_path)
    assert len(grid) == 0
    assert grid.experiment_error is not None
    assert "suggested no trial" in grid.experiment_error
    assert "(asked 25 times in a row over 612 s)" in grid.experiment_error
    assert searcher.asks == 25
    events = read_log(tmp_path / "sim").events
    assert len(events) < 60  # each ask and the Tick it was due at, no idle Ticks
    replayed = replay(tmp_path / "sim")
    assert replayed.state.done
    assert replayed.state.error == grid.experiment_error


def test_a_searcher_that_declines_then_finishes_ends_the_run_as_finished(tmp_path: Path) -> None:
    """BayesOptSearch's `patience` (Ray issue #48121): skipped duplicates
    are None, then FINISHED; the experiment ends without an error."""
    searcher = Scripted(["config", "none", "none", "finished"])
    grid = simulated(searcher, tmp_path)
    assert len(grid) == 1
    assert grid.experiment_error is None
    assert searcher.asks == 4


def test_repeater_counts_num_samples_in_trials(tmp_path: Path) -> None:
    grid = simulated(Repeater(Hill(), repeat=2), tmp_path, samples=4)
    configs = sorted(x_of(r.config) for r in grid)
    assert len(grid) == 4
    assert configs[0] == configs[1]
    assert configs[2] == configs[3]


def test_a_param_space_to_search_is_refused_when_the_searcher_has_its_own(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match="param_space holds values to search"):
        tunecore.simulate(
            parabola,
            param_space={"x": tunecore.uniform(0.0, 1.0)},
            tune_config=TuneConfig(search_alg=Scripted([]), metric="score", mode="max"),
            run_config=RunConfig(storage_path=str(tmp_path), name="sim", verbose=0),
        )


# -- warm start ---------------------------------------------------------------


def test_warm_start_tells_every_finished_trial_of_another_experiment(tmp_path: Path) -> None:
    simulated(Hill(seed=1), tmp_path, name="first", samples=5)
    warmed = Hill(seed=2).warm_start(from_experiment=tmp_path / "first")
    simulated(warmed, tmp_path, name="second", samples=3)
    assert len(warmed.added) == 5
    first = tunecore.ExperimentAnalysis(str(tmp_path / "first"))
    assert sorted(p["parameters"]["x"] for p in warmed.added) == sorted(
        x_of(c) for c in first.get_all_configs().values()
    )
    # The observations are in the second log: a rebuild never reads the first.
    shutil.rmtree(tmp_path / "first")
    contents = read_log(tmp_path / "second")
    history = HistoryWalk(contents)
    runtime = restored_runtime(history, replay(tmp_path / "second").state.searcher, None, None)
    history.run()
    assert runtime is not None
    assert len(runtime.searcher.added) == 5  # type: ignore[attr-defined]


# -- exact resume -------------------------------------------------------------


def _states_before_asks(experiment_dir: Path) -> list[tuple[ExperimentState, Asked]]:
    found: list[tuple[ExperimentState, Asked]] = []

    def visit(before: ExperimentState, event: ExperimentEvent, _: ExperimentState) -> None:
        if isinstance(event, Asked):
            found.append((before, event))

    walk(read_log(experiment_dir), BUILTIN, visit)
    return found


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 2**31 - 1),
    concurrency=st.sampled_from([1, 8]),
    cut=st.floats(0.0, 1.0),
)
def test_a_rebuilt_searcher_continues_with_the_uninterrupted_runs_suggestions(
    tmp_path_factory: pytest.TempPathFactory, seed: int, concurrency: int, cut: float
) -> None:
    """Crash anywhere: the searcher rebuilt from the log's prefix, told
    what the uninterrupted run told it afterwards, suggests byte for byte
    what that run's searcher did."""
    root = tmp_path_factory.mktemp("resume")
    simulated(
        ConcurrencyLimiter(Hill(), max_concurrent=concurrency),
        root,
        samples=16,
        seed=seed,
    )
    contents = read_log(root / "sim")
    records = round(cut * len(contents.events))
    cut_contents = _prefix(contents, records)
    state_at_cut = _state_after(cut_contents)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchResumeWarning)
        history = HistoryWalk(cut_contents)
        runtime = restored_runtime(history, state_at_cut.searcher, None, None)
        history.run()
        assert runtime is not None
        later = [(b, e) for b, e in _states_before_asks(root / "sim")][_asks_in(cut_contents) :]
        for before, event in later:
            got = runtime.replay_ask(before, event)
            assert msgspec.json.encode(got) == msgspec.json.encode(event.config)


def _prefix(contents: Any, records: int) -> Any:
    import dataclasses  # noqa: PLC0415

    return dataclasses.replace(contents, events=contents.events[:records])


def _state_after(contents: Any) -> ExperimentState:
    final: list[ExperimentState] = []

    def visit(_: ExperimentState, __: ExperimentEvent, after: ExperimentState) -> None:
        final[:] = [after]

    walk(contents, BUILTIN, visit)
    if not final:
        from tunecore.core.experiment.snapshot import decode_state  # noqa: PLC0415

        return decode_state(contents.header.initial_state, BUILTIN)
    return final[0]


def _asks_in(contents: Any) -> int:
    return sum(isinstance(e, Asked) for e in contents.events)


# -- Tuner.restore ------------------------------------------------------------


def quadratic(config: dict[str, Any]) -> None:
    tunecore.report({"score": -((config["x"] - 3.0) ** 2), "x": config["x"]})


def fit_in_process(
    searcher: Searcher, tmp_path: Path, callbacks: list[Any] | None = None
) -> tunecore.ResultGrid:
    return Tuner(
        quadratic,
        tune_config=TuneConfig(
            search_alg=ConcurrencyLimiter(searcher, max_concurrent=1),
            metric="score",
            mode="max",
            num_samples=8,
            seed=11,
        ),
        run_config=RunConfig(
            storage_path=str(tmp_path),
            name="exp",
            verbose=0,
            executor="in_process",
            callbacks=callbacks or [],
        ),
    ).fit()


def test_restore_continues_with_exactly_the_suggestions_of_an_uninterrupted_run(
    tmp_path: Path,
) -> None:
    whole = fit_in_process(Hill(), tmp_path / "whole")
    expected = [e.config for e in asked(tmp_path / "whole" / "exp")]
    with pytest.raises(Crash):
        fit_in_process(Hill(), tmp_path / "cut", [CrashAfterTrials(3)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchResumeWarning)
        resumed = Tuner.restore(str(tmp_path / "cut" / "exp"), quadratic).fit()
    assert [e.config for e in asked(tmp_path / "cut" / "exp")] == expected
    assert len(resumed) == len(whole) == 8
    assert all(t.status == "TERMINATED" for t in resumed.trials)


class Unrebuildable(Hill):
    def to_spec(self) -> JsonDict | None:
        return None


def test_restore_asks_for_a_searcher_its_class_cannot_rebuild(tmp_path: Path) -> None:
    with pytest.raises(Crash):
        fit_in_process(Unrebuildable(seed=4), tmp_path, [CrashAfterTrials(2)])
    with pytest.raises(SearcherNotGivenError, match=r"search_alg=\.\.\."):
        Tuner.restore(str(tmp_path / "exp"), quadratic).fit()
    again = Unrebuildable(seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchResumeWarning)
        grid = Tuner.restore(str(tmp_path / "exp"), quadratic, search_alg=again).fit()
    assert len(grid) == 8
    assert len(again.told) == 8  # the two before the crash were told again


def test_a_different_searcher_on_restore_is_named_in_a_warning(tmp_path: Path) -> None:
    with pytest.raises(Crash):
        fit_in_process(Unrebuildable(seed=4), tmp_path, [CrashAfterTrials(2)])
    with pytest.warns(SearchResumeWarning, match="where the log has x="):
        Tuner.restore(str(tmp_path / "exp"), quadratic, search_alg=Unrebuildable(seed=5)).fit()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    script=st.lists(
        st.sampled_from(["config", "config", "none", "finished", "raise", "outside"]),
        max_size=12,
    ),
    concurrency=st.sampled_from([1, 3]),
)
def test_every_search_ends_whatever_the_searcher_answers(
    tmp_path_factory: pytest.TempPathFactory, script: list[str], concurrency: int
) -> None:
    """Liveness: configs, declines, FINISHED, exceptions and values outside
    the space in any order, the experiment ends, and its log replays."""
    root = tmp_path_factory.mktemp("live")
    searcher = ConcurrencyLimiter(ScriptedOverTheSpace(script), max_concurrent=concurrency)
    try:
        tunecore.simulate(
            parabola,
            param_space={"x": tunecore.uniform(0.0, 50.0)},
            tune_config=TuneConfig(search_alg=searcher, metric="score", mode="max", num_samples=6),
            run_config=RunConfig(storage_path=str(root), name="sim", verbose=0),
            max_iterations=2,
        )
        raised = False
    except TuneError as error:
        raised = "The searcher failed" in str(error)
    replayed = replay(root / "sim")
    assert replayed.state.done
    assert len(replayed.state.trials) <= 6
    failed = any(isinstance(e, SearcherFailed) for e in read_log(root / "sim").events)
    assert failed == raised


class CtrlCOnThirdAsk(Hill):
    """Ctrl-C arrives while the searcher computes its third suggestion."""

    def suggest(self, trial_id: str) -> dict[str, Any] | str | None:
        self.asked = getattr(self, "asked", 0) + 1
        if self.asked == 3:
            raise KeyboardInterrupt
        return super().suggest(trial_id)

    @classmethod
    def from_spec(cls, spec: JsonDict) -> Hill:  # type: ignore[override]
        """The rebuilt searcher is a plain Hill: the Ctrl-C came once."""
        return Hill.from_spec(spec)


def test_ctrl_c_while_the_searcher_suggests_loses_nothing_and_resumes_exactly(
    tmp_path: Path,
) -> None:
    fit_in_process(Hill(), tmp_path / "whole")
    expected = [e.config for e in asked(tmp_path / "whole" / "exp")]
    interrupted = fit_in_process(CtrlCOnThirdAsk(), tmp_path / "cut")
    assert len(interrupted) == 2
    assert [e.config for e in asked(tmp_path / "cut" / "exp")] == expected[:2]
    assert replay(tmp_path / "cut" / "exp").rejected == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchResumeWarning)
        resumed = Tuner.restore(str(tmp_path / "cut" / "exp"), quadratic).fit()
    assert len(resumed) == 8
    assert [e.config for e in asked(tmp_path / "cut" / "exp")] == expected


# -- Ray's save / restore / restore_from_dir, without a pickle ------------------


def test_restore_from_dir_continues_where_the_other_experiments_searcher_ended(
    tmp_path: Path,
) -> None:
    """Two experiments of 4 trials, the second restored from the first,
    suggest what one experiment of 8 trials does."""
    one = ConcurrencyLimiter(Hill(seed=5), max_concurrent=1)
    simulated(one, tmp_path, name="whole", samples=8)
    first = ConcurrencyLimiter(Hill(seed=5), max_concurrent=1)
    simulated(first, tmp_path, name="first", samples=4)
    second = Hill(seed=5)
    second.restore_from_dir(tmp_path / "first")
    simulated(ConcurrencyLimiter(second, max_concurrent=1), tmp_path, name="second", samples=4)
    whole = [e.config for e in asked(tmp_path / "whole")]
    assert [e.config for e in asked(tmp_path / "first")] == whole[:4]
    assert [e.config for e in asked(tmp_path / "second")] == whole[4:]
    # The history is in the second log: its rebuild never reads the first.
    shutil.rmtree(tmp_path / "first")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchResumeWarning)
        state_searcher = replay(tmp_path / "second").state.searcher
        history = HistoryWalk(read_log(tmp_path / "second"))
        runtime = restored_runtime(history, state_searcher, None, None)
        history.run()
    assert runtime is not None


def test_save_writes_where_the_history_is_and_restore_reads_it(tmp_path: Path) -> None:
    hill = Hill(seed=5)
    fit_in_process(hill, tmp_path)
    hill.save(tmp_path / "searcher.json")
    saved = json.loads((tmp_path / "searcher.json").read_text())
    assert saved["experiment"] == str(tmp_path / "exp")
    again = Hill(seed=5)
    again.restore(tmp_path / "searcher.json")
    assert again.restore_source == str(tmp_path / "exp")


def test_save_to_dir_writes_the_file_restore_from_dir_reads_as_rays_do(tmp_path: Path) -> None:
    """Ray's pair: `save_to_dir(dir, session)` writes
    `searcher-state-<session>.json` (Ray's a `.pkl`), `restore_from_dir(dir)`
    reads the newest such file; a directory without one is an experiment's."""
    hill = Hill(seed=5)
    fit_in_process(hill, tmp_path)
    saved = tmp_path / "saved"
    saved.mkdir()
    Hill(seed=5).save_to_dir(saved, "2020-01-01")  # an older session's: not used
    hill.save_to_dir(saved, "2021-06-30")
    assert sorted(p.name for p in saved.iterdir()) == [
        "searcher-state-2020-01-01.json",
        "searcher-state-2021-06-30.json",
    ]
    again = Hill(seed=5)
    again.restore_from_dir(saved)
    assert again.restore_source == str(tmp_path / "exp")
    hill.save_to_dir(tmp_path / "exp")  # into the experiment itself, as Ray's Tune does
    from_experiment = Hill(seed=5)
    from_experiment.restore_from_dir(tmp_path / "exp")
    assert from_experiment.restore_source == str(tmp_path / "exp")


def test_restore_refuses_a_file_it_did_not_write(tmp_path: Path) -> None:
    pickled = tmp_path / "searcher.pkl"
    pickled.write_bytes(b"\x80\x04\x95 not json")
    with pytest.raises(ValueError, match="not a searcher file tunecore's save"):
        Hill().restore(pickled)


def test_a_searcher_that_never_ran_saves_and_restores_as_it_is(tmp_path: Path) -> None:
    """Ray's `save` of an unused searcher writes its untouched state (Ray
    2.60's suggestion.rst saves one before its run gives it a space): the
    file restores a searcher that continues from no experiment."""
    Hill(seed=5).save(tmp_path / "never.json")
    again = Hill(seed=5)
    again.restore(tmp_path / "never.json")
    assert again.restore_source is None
    fit_in_process(again, tmp_path / "restored")
    fit_in_process(Hill(seed=5), tmp_path / "fresh")
    fresh = [e.config for e in asked(tmp_path / "fresh" / "exp")]
    assert len(fresh) == 8
    assert [e.config for e in asked(tmp_path / "restored" / "exp")] == fresh


@pytest.mark.parametrize(
    "named",
    [
        "json.tool:main",  # a module this process has not imported: never imported
        "os:path",  # imported, but not a Searcher class
        "tests.api.test_searcher_objects:NoSuchClass",
        # tunecore's own module with side effects (it runs the CLI): never imported
        "tunecore.cli.__main__:Searcher",
        # tunecore's own, imported, but not where its searchers live
        "tunecore.search:Searcher",
    ],
)
def test_a_restore_never_imports_code_a_log_names(tmp_path: Path, named: str) -> None:
    """A log names the searcher's class; reading it runs no code: only
    tunecore's own modules are imported, a user's class must already be
    loaded (their script, run again) or be passed as search_alg=."""
    fit_in_process(Hill(seed=4), tmp_path)
    contents = read_log(tmp_path / "exp")
    assert external_of(replay(tmp_path / "exp").state.searcher) is not None
    forged = ExternalSearcher(name=named, spec={"metric": "score", "mode": "max", "seed": 4})
    imported = set(sys.modules)
    with pytest.raises(SearcherNotGivenError, match=r"never imports it\): pass the searcher again"):
        restored_runtime(HistoryWalk(contents), forged, None, None)
    assert set(sys.modules) == imported


class PosingAsTunecore(Hill):
    """A user's searcher whose module claims to be tunecore's CLI entry point,
    which runs the CLI when imported."""


PosingAsTunecore.__module__ = "tunecore.cli.__main__"


def test_a_restore_never_imports_a_module_of_tunecores_a_run_logged(tmp_path: Path) -> None:
    """An ordinary run logs the class as `tunecore.cli.__main__:...`; the
    restore imports nothing and asks for the searcher again."""
    assert len(fit_in_process(PosingAsTunecore(seed=2), tmp_path)) == 8
    logged = external_of(replay(tmp_path / "exp").state.searcher)
    assert logged is not None
    assert logged.name.startswith("tunecore.cli.__main__:")
    sys.modules.pop("tunecore.cli.__main__", None)
    with pytest.raises(SearcherNotGivenError, match="pass the searcher again"):
        Tuner.restore(str(tmp_path / "exp"), quadratic).fit()
    assert "tunecore.cli.__main__" not in sys.modules


def test_a_rebuild_asks_the_object_again_once_the_walk_is_over(tmp_path: Path) -> None:
    """The rebuild reads the log's tells and asks as the walk steps the
    core, and makes them of the object back to back after it (as a bare
    loop does: an optimizer's work ran slower between the core's steps),
    in log order: the object ends where the run's did."""
    ran = Hill(seed=3)
    simulated(ran, tmp_path, samples=6)
    history = HistoryWalk(read_log(tmp_path / "sim"))
    runtime = restored_runtime(history, replay(tmp_path / "sim").state.searcher, None, None)
    assert runtime is not None
    rebuilt: Hill = runtime.searcher  # type: ignore[assignment]
    asked_during_walk: list[bool] = []

    def visit(_before: ExperimentState, event: ExperimentEvent, _after: ExperimentState) -> None:
        if isinstance(event, Asked):
            asked_during_walk.append(rebuilt.rng is not None)

    history.register(visit)
    history.run()
    assert asked_during_walk == [False] * 6
    assert rebuilt.rng is not None
    assert ran.rng is not None
    assert rebuilt.rng.getstate() == ran.rng.getstate()  # asked six times, as the run


class Listener(Hill):
    """A `Hill` that keeps every result it hears."""

    def __init__(self) -> None:
        super().__init__(seed=1)
        self.heard: list[dict[str, Any]] = []

    def on_trial_result(self, trial_id: str, result: dict[str, Any]) -> None:
        self.heard.append(result)

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Any] | None = None, error: bool = False
    ) -> None:
        self.heard.append(result or {})
        super().on_trial_complete(trial_id, result, error)


def reports_its_options(config: dict[str, Any]) -> None:
    options = argparse.Namespace(x=config["x"])
    tunecore.report({"score": -((config["x"] - 3.0) ** 2), "x": config["x"], "opts": options})


def test_a_searcher_hears_the_objects_a_trial_reported(tmp_path: Path) -> None:
    """As Ray's searchers do; its results' JSON form is what the log holds."""
    listener = Listener()
    Tuner(
        reports_its_options,
        tune_config=TuneConfig(search_alg=listener, metric="score", mode="max", num_samples=3),
        run_config=RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process"),
    ).fit()
    assert len(listener.heard) == 6  # a result and a completion per trial
    assert all(isinstance(result["opts"], argparse.Namespace) for result in listener.heard)
    assert all(result["opts"].x == result["x"] for result in listener.heard)


class OwnSpace(Searcher):
    """A user's searcher keeping its own space, whose
    `set_search_properties` takes whatever it is given (as Ray's built-in
    ones return False first, users' copies often do not)."""

    def __init__(self, space: dict[str, list[float]]) -> None:
        super().__init__()
        self.space = space
        self.offered: list[dict[str, Any]] = []

    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, Any], **spec: Any
    ) -> bool:
        self.offered.append(config)
        self.space = config
        return True

    def suggest(self, trial_id: str) -> dict[str, Any] | None:
        return {"x": self.space["x"][0]} if self.space else None


def test_a_searcher_is_offered_no_empty_space_nor_the_objective(tmp_path: Path) -> None:
    # Ray's tune.run calls set_search_properties only when it has a config:
    # the searcher hears neither the space nor the run's metric and mode.
    searcher = OwnSpace({"x": [3.0]})
    grid = simulated(searcher, tmp_path, samples=2)
    assert searcher.offered == []
    assert [result.config for result in grid] == [{"x": 3.0}, {"x": 3.0}]
    assert (searcher.metric, searcher.mode) == (None, None)
