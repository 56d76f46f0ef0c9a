"""`tunecore.search.bohb.TuneBOHB`, Ray Tune's BOHB searcher on hpbandster,
driven as the shell drives it (set up, seeded, asked and told), and with
`HyperBandForBOHB` in a simulated experiment."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("hpbandster")
pytest.importorskip("ConfigSpace")

import ConfigSpace
import numpy as np

import tunecore
from tunecore import RunConfig, TuneConfig
from tunecore.api.searching import restored_runtime
from tunecore.core.experiment import ExperimentState
from tunecore.core.experiment.snapshot import BUILTIN
from tunecore.core.search.variants import parse_space
from tunecore.model import Asked, ExperimentEvent, InvalidFieldError, JsonDict
from tunecore.schedulers import HyperBandForBOHB
from tunecore.search import ConcurrencyLimiter, Searcher
from tunecore.search.bohb import TuneBOHB
from tunecore.shell.eventlog import read_log
from tunecore.shell.replay import HistoryWalk, walk
from tunecore.shell.searchers import SearchResumeWarning

SPACE: dict[str, Any] = {
    "x": tunecore.uniform(-5.0, 5.0),
    "nested": {"kind": tunecore.choice(["a", "b"])},
    "constant": 7,
}


def loss(config: dict[str, Any], iteration: int = 1) -> float:
    return float((config["x"] - 1.0) ** 2 + (config["nested"]["kind"] == "b") + 3.0 / iteration)


def searcher(seed: int = 3, space: dict[str, Any] | None = None, **kwargs: Any) -> TuneBOHB:
    """Set up as the Tuner sets it up: param space, then the seed."""
    kwargs.setdefault("bohb_config", {"min_points_in_model": 4})
    found = TuneBOHB(metric="loss", mode="min", **kwargs)
    assert found.set_search_properties(None, None, dict(space or SPACE))
    found.use_seed(seed)
    return found


def run(
    found: Searcher,
    steps: int,
    objective: Callable[[dict[str, Any], int], float] = loss,
    iterations: int = 3,
) -> list[Any]:
    """Ask for a trial, report `iterations` results, complete it; every
    answer, in order."""
    answers: list[Any] = []
    for step in range(steps):
        trial_id = f"t{step}"
        config = found.suggest(trial_id)
        answers.append(config)
        assert isinstance(config, dict)
        for iteration in range(1, iterations + 1):
            result = {"training_iteration": iteration, "loss": objective(config, iteration)}
            found.on_trial_result(trial_id, result)
        found.on_trial_complete(trial_id, result)
    return answers


# -- the space ----------------------------------------------------------------------


EVERY_DOMAIN: dict[str, Any] = {
    "uniform": tunecore.uniform(-1.0, 2.0),
    "loguniform": tunecore.loguniform(1e-4, 1e-1),
    "quniform": tunecore.quniform(0.0, 1.0, 0.25),
    "qloguniform": tunecore.qloguniform(1.0, 100.0, 1.0),
    "randint": tunecore.randint(2, 5),
    "lograndint": tunecore.lograndint(1, 1000),
    "qrandint": tunecore.qrandint(0, 20, 5),
    "qlograndint": tunecore.qlograndint(10, 1000, 10),
    "randn": tunecore.randn(3.0, 2.0),
    "qrandn": tunecore.qrandn(0.0, 2.0, 0.5),
    "choice": tunecore.choice(["relu", [1, 2], {"k": None}, 3]),
    "one": tunecore.choice(["only"]),
    "deep": {"er": tunecore.uniform(0.0, 1.0)},
    "constant": "kept",
}


def test_every_domain_converts_and_suggestions_stay_in_it() -> None:
    found = searcher(space=EVERY_DOMAIN)
    answers = run(found, 24, objective=lambda config, _: float(config["uniform"]), iterations=1)
    parsed = parse_space(EVERY_DOMAIN)
    for config in answers:
        assert config["constant"] == "kept"
        assert config["one"] == "only"
        for parameter in parsed.sampled:
            value: Any = config
            for part in parameter.path:
                value = value[part]
            domain: Any = parameter.domain
            assert domain.is_valid(value), (parameter.path, value)
        assert type(config["randint"]) is int
        assert type(config["qrandint"]) is int
        assert type(config["uniform"]) is float
        assert abs(config["randn"] - 3.0) <= 8.0  # cut at 4 standard deviations
    # randint's high is exclusive, as in Ray; every category is reachable.
    assert {c["randint"] for c in answers} == {2, 3, 4}
    assert {json.dumps(c["choice"]) for c in answers} == {'"relu"', "[1, 2]", '{"k": null}', "3"}
    assert json.loads(json.dumps(answers)) == answers  # plain JSON values only


@pytest.mark.parametrize(
    ("space", "path"),
    [
        ({"a": {"b": tunecore.grid_search([1, 2])}}, r"param_space\['a'\]\['b'\]"),
        ({"f": tunecore.sample_from(lambda _: 1)}, r"param_space\['f'\]"),
    ],
)
def test_a_grid_or_a_function_is_refused_naming_its_path(space: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidFieldError, match=f"^{path}"):
        TuneBOHB(space=space, metric="loss", mode="min")


def test_rays_configspace_space_nests_slashed_names_and_rebuilds_from_json() -> None:
    space = ConfigSpace.ConfigurationSpace()
    space.add(ConfigSpace.UniformFloatHyperparameter("x", lower=-5, upper=5))
    space.add(ConfigSpace.CategoricalHyperparameter("nested/kind", choices=["a", "b"]))
    found = TuneBOHB(space, metric="loss", mode="min", seed=2)
    assert not found.set_search_properties("other", "max", {"x": tunecore.uniform(0, 1)})
    spec = found.to_spec()
    assert spec is not None
    rebuilt = TuneBOHB.from_spec(json.loads(json.dumps(spec)))
    answers = run(found, 8)
    assert all(set(c) == {"x", "nested"} and c["nested"]["kind"] in "ab" for c in answers)
    assert run(rebuilt, 8) == answers


# -- determinism and rebuilding -----------------------------------------------------------


def test_the_same_seed_gives_the_same_run_and_another_seed_another() -> None:
    first = run(searcher(seed=5), 12)
    assert run(searcher(seed=5), 12) == first
    assert run(searcher(seed=6), 12) != first


def test_numpys_global_generator_is_left_as_it_was() -> None:
    found = searcher()
    np.random.seed(11)
    expected = np.random.rand(3)
    np.random.seed(11)
    run(found, 10)
    assert list(np.random.rand(3)) == list(expected)


@pytest.mark.slow  # a process of its own per run: the `slow` session
def test_the_run_is_the_same_in_another_process() -> None:
    """No hash order or unseeded generator in it: PYTHONHASHSEED does not matter."""
    script = (
        "import json\n"
        "from tests.search.test_bohb import run, searcher\n"
        "print(json.dumps(run(searcher(seed=5), 10)))\n"
    )
    outputs = []
    for hash_seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            cwd=Path(__file__).parents[2],
        )
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert outputs[0] == outputs[1] == run(searcher(seed=5), 10)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**40), steps=st.integers(0, 12))
def test_from_spec_replaying_the_same_asks_and_tells_suggests_what_the_original_does(
    seed: int, steps: int
) -> None:
    """For any seed and any point where a run is cut, the rebuilt searcher
    fed the same asks and tells suggests what the original suggests next
    (the model exists from the 8th suggestion on: 4 good and 3 other
    results at a budget, for min_points_in_model=4 in 2 dimensions)."""
    found = searcher(seed=seed, points_to_evaluate=[{"x": 1.0, "nested": {"kind": "a"}}])
    spec = found.to_spec()
    assert spec is not None
    rebuilt = TuneBOHB.from_spec(json.loads(json.dumps(spec)))
    assert run(rebuilt, steps) == run(found, steps)
    assert rebuilt.suggest("next") == found.suggest("next")


def test_a_seed_the_user_gives_wins_over_the_experiments() -> None:
    mine = TuneBOHB(metric="loss", mode="min", seed=1)
    mine.set_search_properties(None, None, dict(SPACE))
    mine.use_seed(99)
    assert run(mine, 6) == run(searcher(seed=1), 6)


# -- the model -------------------------------------------------------------------------


def test_the_model_learns_where_the_loss_is_low() -> None:
    # 40 trials: the first 7 are random; once the model exists (7 results at
    # a budget), 2 in 3 suggestions come from it (random_fraction 1/3).
    answers = run(searcher(seed=4), 40)

    def near(configs: list[Any]) -> int:
        return sum(abs(c["x"] - 1.0) < 1.0 for c in configs)

    assert near(answers[20:]) > near(answers[:20])
    assert near(answers[20:]) >= 10  # random search: 2 in 10 on average


def test_each_result_is_told_at_the_budget_its_time_attribute_holds() -> None:
    found = searcher(time_attr="epoch")
    config = found.suggest("a")
    assert config is not None
    for epoch in (1, 2, 4):
        found.on_trial_result("a", {"epoch": epoch, "loss": 1.0, "training_iteration": 9})
    found.on_trial_result("a", {"loss": 2.0})  # no budget: not told
    found.on_trial_result("a", {"epoch": 5})  # no metric: not told
    model: Any = found._generator  # hpbandster keeps results by budget
    assert sorted(model.configs) == [1.0, 2.0, 4.0]
    assert model.losses[4.0] == [1.0]


def test_mode_max_tells_the_negated_metric_as_the_loss() -> None:
    found = TuneBOHB(SPACE, metric="acc", mode="max", seed=1)
    found.suggest("a")
    found.on_trial_result("a", {"training_iteration": 1, "acc": 0.75})
    model: Any = found._generator
    assert model.losses[1.0] == [-0.75]


# -- Ray's arguments -----------------------------------------------------------------------


def test_points_to_evaluate_come_first_nested_or_flat() -> None:
    points = [{"x": 2.0, "nested": {"kind": "b"}}, {"x": -1.0, "nested/kind": "a"}]
    found = searcher(points_to_evaluate=points)
    assert found.suggest("a") == {"x": 2.0, "nested": {"kind": "b"}, "constant": 7}
    assert found.suggest("b") == {"x": -1.0, "nested": {"kind": "a"}, "constant": 7}
    assert points[1] == {"x": -1.0, "nested/kind": "a"}  # the user's list is left alone


def test_a_point_outside_the_space_is_refused_naming_it() -> None:
    with pytest.raises(InvalidFieldError, match=r"points_to_evaluate\[0\]\['x'\]"):
        searcher(points_to_evaluate=[{"x": 9.0, "nested": {"kind": "a"}}])
    with pytest.raises(InvalidFieldError, match=r"points_to_evaluate\[0\]\['nested'\]\['kind'\]"):
        searcher(points_to_evaluate=[{"x": 0.0}])


def test_max_concurrent_bounds_the_trials_that_have_not_ended() -> None:
    found = searcher(max_concurrent=2)
    assert found.suggest("a") is not None
    assert found.suggest("b") is not None
    assert found.suggest("c") is None
    found.on_trial_complete("a")
    assert found.suggest("c") is not None
    assert found.set_max_concurrency(0)
    assert found.suggest("d") is not None


def test_only_a_mode_uses_rays_anonymous_metric() -> None:
    found = TuneBOHB(SPACE, mode="min", seed=1)
    found.suggest("a")
    assert found.metric == "_metric"


# -- errors ---------------------------------------------------------------------------


def test_without_hpbandster_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hpbandster.optimizers.config_generators", None)
    with pytest.raises(ImportError, match=r"pip install 'tunecore\[bohb\]'"):
        TuneBOHB()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"bohb_config": {"min_points": 3}}, r"TuneBOHB.bohb_config\['min_points'\]"),
        ({"bohb_config": {"num_samples": "64"}}, r"TuneBOHB.bohb_config\['num_samples'\]"),
        ({"metric": ["a", "b"], "mode": ["min", "max"]}, "TuneBOHB.metric"),
        ({"mode": "best"}, "TuneBOHB.mode"),
        ({"seed": 1.5}, "TuneBOHB.seed"),
        ({"max_concurrent": "2"}, "TuneBOHB.max_concurrent"),
        ({"points_to_evaluate": {"x": 1}}, "TuneBOHB.points_to_evaluate"),
        ({"space": [1, 2]}, "TuneBOHB.space"),
    ],
)
def test_a_bad_argument_is_refused_naming_it(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidFieldError, match=f"^{field}"):
        TuneBOHB(**kwargs)


def test_asking_without_a_space_or_a_mode_says_what_is_missing() -> None:
    with pytest.raises(RuntimeError, match="no search space"):
        TuneBOHB(metric="loss", mode="min").suggest("a")
    with pytest.raises(RuntimeError, match=r"`metric` \(loss\) or `mode` \(None\) is not set"):
        TuneBOHB(SPACE, metric="loss").suggest("a")


# -- with HyperBandForBOHB in an experiment ---------------------------------------------


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    """A learning curve whose end is best at x = 1."""
    x = config["x"]
    assert isinstance(x, float)
    return {"loss": (x - 1.0) ** 2 + 5.0 / iteration}, 1.0


def simulate_bohb(path: Path, name: str, seed: int = 4) -> tunecore.ResultGrid:
    return tunecore.simulate(
        curve,
        param_space={"x": tunecore.uniform(-5.0, 5.0), "c": 3},
        tune_config=TuneConfig(
            scheduler=HyperBandForBOHB(max_t=9, reduction_factor=3),
            search_alg=TuneBOHB(bohb_config={"min_points_in_model": 3}),
            metric="loss",
            mode="min",
            num_samples=30,
            seed=seed,
        ),
        run_config=RunConfig(storage_path=str(path), name=name, verbose=0),
    )


def test_with_hyperband_for_bohb_the_brackets_run_as_ray_sizes_them(tmp_path: Path) -> None:
    grid = simulate_bohb(tmp_path, "sim")
    assert len(grid) == 30
    assert not grid.errors
    # max_t=9, eta=3, largest bracket first: s=2 (9 trials, milestones 1 3 9,
    # keeping 9 3 1), s=1 (5 trials, 3 9, keeping 5 2), s=0 (3 trials to 9):
    # 17 per band. Trials 18-30 fill s=2 of the next band and 4 of the 5
    # places of its s=1, which is released when no trial comes.
    stops = [r.metrics["training_iteration"] for r in grid]
    assert stops.count(1) == 6 + 6
    assert stops.count(3) == 2 + 3 + 2 + 2
    assert stops.count(9) == 1 + 2 + 3 + 1 + 2
    assert all(r.config["c"] == 3 for r in grid)


def test_with_hyperband_for_bohb_the_same_seed_repeats_the_run(tmp_path: Path) -> None:
    def configs(name: str, seed: int) -> list[Any]:
        grid = simulate_bohb(tmp_path, name, seed)
        return sorted((str(r.metrics["trial_id"]), json.dumps(r.config)) for r in grid)

    first = configs("a", 4)
    assert configs("b", 4) == first
    assert configs("c", 5) != first


def test_a_rebuilt_searcher_repeats_every_logged_suggestion(tmp_path: Path) -> None:
    simulate_bohb(tmp_path, "sim")
    contents = read_log(tmp_path / "sim")
    asks: list[tuple[ExperimentState, Asked]] = []

    def visit(before: ExperimentState, event: ExperimentEvent, _: ExperimentState) -> None:
        if isinstance(event, Asked):
            asks.append((before, event))

    walk(contents, BUILTIN, visit)
    assert len(asks) == 30
    # Cut the log before the 25th ask: the model has results by then.
    cut = [i for i, e in enumerate(contents.events) if isinstance(e, Asked)][24]
    prefix = dataclasses.replace(contents, events=contents.events[:cut])
    done = sum(isinstance(e, Asked) for e in prefix.events)
    assert done == 24
    final: list[ExperimentState] = []
    walk(prefix, BUILTIN, lambda _b, _e, after: final.append(after))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SearchResumeWarning)
        history = HistoryWalk(prefix)
        runtime = restored_runtime(history, final[-1].searcher, None, None)
        history.run()
        assert runtime is not None
        for before, event in asks[done:]:
            got = runtime.replay_ask(before, event)
            assert msgspec.json.encode(got) == msgspec.json.encode(event.config)


@pytest.mark.parametrize("spelling", ["ConcurrencyLimiter", "max_concurrent_trials"])
def test_paused_trials_leave_room_under_a_concurrency_limiter(
    tmp_path: Path, spelling: str
) -> None:
    """As in Ray, where TuneBOHB takes the limiter's bound over and hears
    HyperBandForBOHB's pauses: new trials only while fewer than 2 run, but
    paused ones do not hold a place, so a bracket fills instead of waiting."""
    limited = spelling == "ConcurrencyLimiter"
    tunecore.simulate(
        curve,
        param_space={"x": tunecore.uniform(-5.0, 5.0)},
        tune_config=TuneConfig(
            scheduler=HyperBandForBOHB(max_t=9, reduction_factor=3),
            search_alg=(
                ConcurrencyLimiter(TuneBOHB(seed=1), max_concurrent=2)
                if limited
                else TuneBOHB(seed=1)
            ),
            max_concurrent_trials=None if limited else 2,
            metric="loss",
            mode="min",
            num_samples=12,
        ),
        run_config=RunConfig(storage_path=str(tmp_path), name="sim", verbose=0),
    )
    most_live = 0
    running_at_creation: list[int] = []

    def visit(before: ExperimentState, _: ExperimentEvent, after: ExperimentState) -> None:
        nonlocal most_live
        most_live = max(most_live, after.running + len(after.paused))
        if after.created > before.created:
            running_at_creation.append(before.running)

    walk(read_log(tmp_path / "sim"), BUILTIN, visit)
    assert len(running_at_creation) == 12
    assert max(running_at_creation) < 2  # a new trial only into a free place
    assert most_live > 2  # paused trials waited while others ran (a resumed one
    # may then run beside two others until one ends, as in Ray)


def test_a_configspace_categorical_gives_plain_strings(tmp_path: Path) -> None:
    """ConfigSpace samples categoricals as `np.str_`, which the log's
    encoder refuses: TuneBOHB's docstring example failed every trial."""
    import ConfigSpace as CS  # noqa: PLC0415 - imported where it is used, as in Ray's docs

    space = CS.ConfigurationSpace(seed=1)
    space.add(CS.CategoricalHyperparameter("act", choices=["relu", "tanh"]))
    searcher = TuneBOHB(space, metric="loss", mode="min", seed=1)
    run = tunecore.RunConfig(storage_path=str(tmp_path), verbose=0, executor="in_process")
    tuner = tunecore.Tuner(
        acts,
        tune_config=tunecore.TuneConfig(num_samples=3, search_alg=searcher),
        run_config=run,
    )
    grid = tuner.fit()
    assert not grid.errors
    assert {type(result.config["act"]) for result in grid} == {str}


def acts(config: dict[str, Any]) -> None:
    tunecore.report({"loss": 1.0 if config["act"] == "relu" else 2.0})
