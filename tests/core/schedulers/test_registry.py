"""The schedulers' registry is the one table: what it holds is what the
snapshot decodes, Ray's `create_scheduler` builds and the command line
offers; a scheduler added to it (the toy `BestAtBudget`) runs, replays and
resumes like a built-in one."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from pathlib import Path

import pytest

import tunecore
from tests.api.test_restore import ITERATIONS, Crash, CrashAfter, counting
from tests.core.schedulers.toy_scheduler import TOY_ENTRY, BestAtBudget
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.cli import main
from tunecore.core.experiment.snapshot import BUILTIN, decode_state, encode_state, snapshot_kind
from tunecore.core.registry import Entry, Registry
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.schedulers.registry import SCHEDULERS
from tunecore.model import JsonDict, JsonValue, Resources, TrialStatus
from tunecore.schedulers import create_scheduler
from tunecore.shell.eventlog import LogError
from tunecore.shell.replay import replay

WITH_TOY = SCHEDULERS.including(TOY_ENTRY)


def test_the_snapshot_decodes_exactly_the_registered_schedulers() -> None:
    scheduler_type, _ = typing.get_args(BUILTIN)
    members = {getattr(m, "__origin__", m) for m in typing.get_args(scheduler_type)}
    stored = {entry.stored_as or entry.resolve() for entry in SCHEDULERS.entries}
    assert members == {getattr(m, "__origin__", m) for m in stored}


def test_create_scheduler_knows_every_ray_name_of_the_registry() -> None:
    for alias, entry in SCHEDULERS.ray_names().items():
        if alias == "pbt_replay":  # Ray's constructor reads a policy file: tested with one
            continue
        built = create_scheduler(
            alias.upper(),
            metric="loss",
            mode="min",
            hyperparam_mutations={"lr": [0.1, 0.2]},  # PBT's (the others drop it)
            hyperparam_bounds={"lr": [0.1, 0.2]},  # PB2's
        )
        assert isinstance(built, entry.resolve())
    with pytest.raises(ValueError, match=r"scheduler='asha' is not one of \['async_hyperband'"):
        create_scheduler("asha")


@pytest.mark.parametrize(
    ("command", "choices"),
    [
        (["run", "--scheduler"], SCHEDULERS.choices()),
        (["simulate", "--from", "x", "--scheduler"], sorted(SCHEDULERS.choices(what_if=True))),
    ],
)
def test_the_command_lines_choices_are_the_registrys(
    command: list[str], choices: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([*command, "nonesuch"])
    offered = ", ".join(repr(name) for name in choices)
    assert f"invalid choice: 'nonesuch' (choose from {offered})" in capsys.readouterr().err
    assert "hb_bohb" not in SCHEDULERS.choices()


def test_a_name_twice_is_refused() -> None:
    with pytest.raises(ValueError, match=r"scheduler registry: the names \['fifo'\] appear twice"):
        SCHEDULERS.including(Entry("fifo", FIFOScheduler))


def reached(metrics: Mapping[str, JsonValue]) -> int:
    iteration = metrics["training_iteration"]
    assert isinstance(iteration, int)
    return iteration


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    a = config["a"]
    assert isinstance(a, float)
    return {"loss": a + 1.0 / iteration}, 1.0


def test_a_registered_scheduler_runs_replays_and_decodes(tmp_path: Path) -> None:
    results = tunecore.simulate(
        curve,
        param_space={"a": tunecore.uniform(0.0, 1.0)},
        tune_config=TuneConfig(
            metric="loss", mode="min", num_samples=8, seed=1, scheduler=BestAtBudget()
        ),
        run_config=RunConfig(name="sim", storage_path=str(tmp_path), verbose=0),
        cluster=Resources(cpu=1),
        max_iterations=6,
    )
    lengths = sorted(reached(r.metrics) for r in results)
    assert lengths[0] == 3  # some were stopped at the budget...
    assert lengths[-1] == 6  # ...and the best so far went on
    directory = Path(results.experiment_path)
    with pytest.raises(LogError):
        replay(directory)  # the built-in table does not know it
    replayed = replay(directory, kind=snapshot_kind(WITH_TOY))
    assert isinstance(replayed.state.scheduler, BestAtBudget)
    assert replayed.state.scheduler.num_stopped == lengths.count(3)
    assert replayed.snapshots_verified >= 1
    encoded = encode_state(replayed.state)
    assert encode_state(decode_state(encoded, snapshot_kind(WITH_TOY))) == encoded


def test_a_registered_scheduler_resumes_after_a_crash(tmp_path: Path) -> None:
    def tuner() -> Tuner:
        return Tuner(
            counting,
            param_space={"x": tunecore.grid_search([0.1, 0.2, 0.3])},
            # One trial at a time: which reaches the budget first decides the rest.
            tune_config=TuneConfig(
                metric="loss", mode="min", scheduler=BestAtBudget(), max_concurrent_trials=1
            ),
            run_config=RunConfig(
                name="exp",
                storage_path=str(tmp_path),
                verbose=0,
                executor="in_process",
                callbacks=[CrashAfter(results=4)],
            ),
        )

    with pytest.raises(Crash):
        tuner().fit()
    kind = snapshot_kind(WITH_TOY)
    results = Tuner.restore(tmp_path / "exp", counting, snapshot_kind=kind).fit()
    assert all(r.status is TrialStatus.TERMINATED for r in results)
    assert sorted(reached(r.metrics) for r in results) == [
        3,
        3,
        ITERATIONS,
    ]  # x=0.1 is best at the budget; the others stop there
    final = replay(tmp_path / "exp", kind=kind).state.scheduler
    assert isinstance(final, BestAtBudget)
    assert final.num_stopped == 2


def test_a_registry_without_class_entries_has_no_union() -> None:
    lazy = Registry("searcher", (Entry("x", "tunecore.search.optuna:OptunaSearch"),))
    with pytest.raises(ValueError, match="searcher registry: no entry is a class"):
        lazy.union()
