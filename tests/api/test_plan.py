"""`plan_run`: each decision a run makes once, without Ray, a directory or
a `Tuner` (the environment is a mapping)."""

from __future__ import annotations

from typing import Any

import pytest

from tunecore import RunConfig, TuneConfig
from tunecore.api.plan import CHAIN_STARTS, plan_run
from tunecore.callback import Callback
from tunecore.core.search import BasicVariantGenerator
from tunecore.search import Searcher
from tunecore.shell.run_plan import RunPlan


def plan(
    tune: TuneConfig | None = None,
    run: RunConfig | None = None,
    environ: dict[str, str] | None = None,
    **facts: Any,
) -> RunPlan:
    given: dict[str, Any] = {
        "executor_kind": "ray",
        "executor_given": False,
        "mirrored": False,
        "own_stopper": False,
        "resuming": False,
        **facts,
    }
    return plan_run(tune or TuneConfig(), run or RunConfig(), environ=environ or {}, **given)


class _Suggests(Searcher):
    def suggest(self, trial_id: str) -> dict[str, object] | None:
        return {"x": 1}


def test_trials_are_chained_only_on_rays_reused_actors() -> None:
    assert plan().chain_starts == CHAIN_STARTS
    assert plan(TuneConfig(reuse_actors=False)).chain_starts == 0
    assert plan(run=RunConfig(executor="in_process"), executor_kind="in_process").chain_starts == 0
    assert plan(executor_given=True).chain_starts == 0  # simulated workers
    assert plan(resuming=True).chain_starts is None  # the logged config's


def test_the_variable_sets_the_chain_length_and_a_bad_value_is_named() -> None:
    assert plan(environ={"TUNECORE_CHAIN_STARTS": "3"}).chain_starts == 3
    assert plan(environ={"TUNECORE_CHAIN_STARTS": "0"}).chain_starts == 0
    with pytest.raises(ValueError, match="TUNECORE_CHAIN_STARTS='four' is invalid"):
        plan(environ={"TUNECORE_CHAIN_STARTS": "four"})
    # A resume never reads it: its chains are the log's.
    assert plan(environ={"TUNECORE_CHAIN_STARTS": "four"}, resuming=True).chain_starts is None


def test_chains_reach_the_executor_only_when_nothing_watches_a_start() -> None:
    assert plan().run_chains
    assert not plan(run=RunConfig(callbacks=[Callback()])).run_chains
    assert not plan(mirrored=True).run_chains
    assert not plan(own_stopper=True).run_chains


def test_a_trials_directory_is_made_at_once_only_for_a_users_callback() -> None:
    assert not plan().trial_dirs_at_once
    assert plan(run=RunConfig(callbacks=[Callback()])).trial_dirs_at_once


def test_a_trial_runs_in_its_directory_as_ray_decides() -> None:
    assert plan().chdir
    assert not plan(environ={"RAY_CHDIR_TO_TRIAL_DIR": "0"}).chdir
    assert not plan(executor_kind="in_process").chdir
    assert plan(TuneConfig(chdir_to_trial_dir=True), executor_kind="in_process").chdir


def test_output_files_follow_log_to_file() -> None:
    assert plan().output_files is None
    assert plan(run=RunConfig(log_to_file=True)).output_files == ("stdout", "stderr")
    assert plan(run=RunConfig(log_to_file="out.txt")).output_files == ("out.txt", "out.txt")


def test_strict_metric_checking_is_turned_off_by_rays_variable() -> None:
    assert plan().strict_metrics
    assert not plan(environ={"TUNE_DISABLE_STRICT_METRIC_CHECKING": "1"}).strict_metrics


@pytest.mark.parametrize(
    ("value", "stops"), [(None, True), ("0", True), ("1", False), (" 2 ", False), ("-1", False)]
)
def test_the_first_ctrl_c_raises_when_rays_variable_disables_the_handler(
    value: str | None, stops: bool
) -> None:
    """Ray reads `int(os.getenv("TUNE_DISABLE_SIGINT_HANDLER", "0"))`."""
    environ = {} if value is None else {"TUNE_DISABLE_SIGINT_HANDLER": value}
    assert plan(environ=environ).stop_on_sigint is stops


@pytest.mark.parametrize("value", ["yes", "", "1.0"])
def test_a_sigint_variable_that_is_no_whole_number_is_named(value: str) -> None:
    with pytest.raises(ValueError, match=f"TUNE_DISABLE_SIGINT_HANDLER={value!r} is invalid"):
        plan(environ={"TUNE_DISABLE_SIGINT_HANDLER": value})


def test_only_an_unseeded_search_draws_a_seed() -> None:
    assert plan().draws_seed
    assert not plan(TuneConfig(seed=3)).draws_seed
    assert plan(TuneConfig(search_alg=_Suggests())).draws_seed
    assert not plan(TuneConfig(search_alg=BasicVariantGenerator(seed=1))).draws_seed
    assert plan(TuneConfig(search_alg=BasicVariantGenerator())).draws_seed
    assert not plan(resuming=True).draws_seed  # the logged search goes on
