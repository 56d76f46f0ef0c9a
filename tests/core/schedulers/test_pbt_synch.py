"""Synchronous PBT (`synch=True`) and `custom_explore_fn`, driven through the
real core (`PolicyDriver`): trials wait at the barrier until the slowest
reaches it, then the whole population is perturbed at once, as Ray's
`PopulationBasedTraining(synch=True)` does; exploits of waiting trials
restore the donor's barrier checkpoint; a snapshot taken anywhere decodes
to a scheduler that makes the same decisions."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunecore.core.checkpoints import current_checkpoint, newest_persistent
from tunecore.core.experiment import new_experiment, step
from tunecore.core.schedulers.pbt import CUSTOM_EXPLORE_PATH, PopulationBasedTraining
from tunecore.core.schedulers.pbt_replay import (
    PolicyChange,
    PopulationBasedTrainingReplay,
    policy_changes,
)
from tunecore.model import (
    CheckpointStorage,
    Decision,
    InvalidFieldError,
    JsonDict,
    Mode,
    RecordExploit,
    Rejection,
    TrialStatus,
    ValuesDrawn,
)
from tunecore.testing import PolicyDriver

PAUSED = TrialStatus.PAUSED
RUNNING = TrialStatus.RUNNING


def synch_pbt(**overrides: object) -> PopulationBasedTraining:
    settings_: dict[str, object] = {
        "time_attr": "training_iteration",
        "metric": "score",
        "mode": Mode.MAX,
        "perturbation_interval": 2,
        "hyperparam_mutations": {"n": [0, 1, 2, 3, 4, 5, 6, 7]},
        "quantile_fraction": 0.25,
        "seed": 7,
        "synch": True,
    }
    settings_.update(overrides)
    return PopulationBasedTraining(**settings_)  # type: ignore[arg-type]


def population(cpus: float = 4, **overrides: object) -> tuple[PolicyDriver, list[str]]:
    driver = PolicyDriver(synch_pbt(**overrides), cpus=cpus)
    ids = [driver.add({"n": n}) for n in (0, 2, 4, 6)]
    return driver, ids


def scheduler_of(driver: PolicyDriver) -> PopulationBasedTraining:
    scheduler = driver.scheduler
    assert isinstance(scheduler, PopulationBasedTraining)
    return scheduler


def test_trials_wait_at_the_interval_until_the_slowest_gets_there() -> None:
    driver, ids = population()
    fast, slow = ids[:3], ids[3]
    for trial_id in ids:
        driver.result(trial_id, score=1.0)
    for trial_id in fast:
        assert driver.result(trial_id, score=1.0) is Decision.PAUSE
        # It waits with a persistent save: any waiting trial may be a donor.
        assert newest_persistent(driver.trial(trial_id).checkpoints) is not None
    assert driver.started() == []  # nobody ahead of the barrier runs again
    assert scheduler_of(driver).num_perturbations == 0
    # The slowest reaches the barrier: everyone is perturbed, then runs on.
    driver.result(slow, score=1.0)
    scheduler = scheduler_of(driver)
    assert scheduler.num_checkpoints == 1  # the upper quantile (1 of 4)
    assert scheduler.num_perturbations == 1  # the lower one exploited
    assert scheduler.plans == {}
    assert scheduler.next_sync == 4.0
    assert {m.last_perturbation_time for m in scheduler.members.values()} == {2.0}
    assert sorted(driver.trial_ids(RUNNING)) == sorted(ids)


def test_the_lowest_trial_takes_the_best_trials_barrier_checkpoint_and_explored_config() -> None:
    driver, ids = population(resample_probability=0.0)
    scores = dict(zip(ids, (1.0, 2.0, 3.0, 9.0), strict=True))
    for _ in range(2):
        for trial_id in ids:
            driver.result(trial_id, score=scores[trial_id])
    worst, best = ids[0], ids[3]
    worst_trial = driver.trial(worst)
    assert worst_trial.exploited is not None
    barrier_checkpoint = [
        c for c in driver.trial(best).checkpoints.persistent if c.training_iteration == 2
    ]
    assert worst_trial.exploited.checkpoint == barrier_checkpoint[-1]
    assert worst_trial.restoring_from is None or worst_trial.restoring_from.path.startswith(best)
    # The donor's config, its `n` moved to a neighbouring category.
    assert worst_trial.spec.config["n"] in (5, 7)
    assert worst_trial.spec.experiment_tag.startswith("0@perturbed[n=")
    # It restarts from the donor's checkpoint until it saves one of its own.
    assert current_checkpoint(worst_trial) == worst_trial.exploited.checkpoint


def test_the_next_barrier_is_one_interval_on() -> None:
    driver, ids = population()
    for _ in range(4):
        for trial_id in ids:
            driver.result(trial_id, score=1.0)
    scheduler = scheduler_of(driver)
    assert scheduler.next_sync == 6.0
    assert {m.last_perturbation_time for m in scheduler.members.values()} == {4.0}


def test_a_population_larger_than_the_cluster_takes_turns_to_the_barrier() -> None:
    driver, ids = population(cpus=2)
    assert driver.trial_ids(RUNNING) == ids[:2]
    for trial_id in ids[:2]:
        driver.result(trial_id, score=1.0)
        assert driver.result(trial_id, score=1.0) is Decision.PAUSE
    # The trials behind the barrier start, never the ones past it.
    assert driver.trial_ids(RUNNING) == ids[2:]
    driver.result(ids[2], score=1.0)
    driver.result(ids[2], score=1.0)
    assert driver.trial_ids(RUNNING) == [ids[3]]
    driver.result(ids[3], score=1.0)
    driver.result(ids[3], score=5.0)
    assert scheduler_of(driver).num_perturbations == 1
    assert len(driver.trial_ids(RUNNING)) == 2


def test_a_trial_that_ends_completes_the_barrier_for_the_others() -> None:
    driver, ids = population()
    for trial_id in ids:
        driver.result(trial_id, score=1.0)
    for trial_id in ids[:3]:
        driver.result(trial_id, score=float(ids.index(trial_id)))
    driver.complete(ids[3])  # the slowest ends before the barrier
    scheduler = scheduler_of(driver)
    assert scheduler.num_perturbations == 1
    assert sorted(driver.trial_ids(RUNNING)) == sorted(ids[:3])


def recorded_lines(driver: PolicyDriver, scheduler: PopulationBasedTraining) -> list[RecordExploit]:
    """The policy lines the core asked the shell to write, found by
    replaying the driver's events on a fresh experiment around `scheduler`."""
    state = new_experiment(driver.state.config, scheduler=scheduler)
    found: list[RecordExploit] = []
    for event in driver.events:
        outcome = step(state, event)
        assert not isinstance(outcome, Rejection)
        state, commands = outcome
        found += [c for c in commands if isinstance(c, RecordExploit)]
    return found


def test_policy_lines_are_recorded_as_rays_log_config_writes_them() -> None:
    driver, ids = population()
    for _ in range(2):
        for trial_id in ids:
            driver.result(trial_id, score=float(ids.index(trial_id)))
    (line,) = recorded_lines(driver, synch_pbt())
    assert (line.trial_id, line.donor_id) == (ids[0], ids[3])
    assert (line.trial_tag, line.donor_tag) == ("0", "3")
    assert line.donor_config == {"n": 6}
    assert line.config == driver.trial(ids[0]).spec.config
    # Ray's iterations: the last result each had recorded when perturbed (the
    # reporting donor's is the one before its barrier result).
    assert (line.trial_iteration, line.donor_iteration) == (2, 1)


def test_no_policy_lines_without_log_config() -> None:
    driver, ids = population(log_config=False)
    for _ in range(2):
        for trial_id in ids:
            driver.result(trial_id, score=float(ids.index(trial_id)))
    assert scheduler_of(driver).num_perturbations == 1
    assert recorded_lines(driver, synch_pbt(log_config=False)) == []


@settings(max_examples=60, deadline=None)
@given(
    scores=st.lists(st.integers(0, 9), min_size=16, max_size=16),
    cut=st.integers(0, 15),
)
def test_a_snapshot_anywhere_resumes_to_the_same_decisions(scores: list[int], cut: int) -> None:
    """The scheduler decoded from a snapshot taken after `cut` results
    (barrier state and plans included) goes on exactly as the live one."""
    driver, ids = population()
    results = [(ids[i % 4], float(score)) for i, score in enumerate(scores)]
    snapshot = None
    for number, (trial_id, score) in enumerate(results):
        if number == cut:
            snapshot = driver.snapshot()
            restored = driver.restore(snapshot)
            assert msgspec.msgpack.encode(restored.scheduler) == msgspec.msgpack.encode(
                driver.state.scheduler
            )
        if driver.status(trial_id) is RUNNING:
            driver.result(trial_id, score=score)
    replayed = driver.replay_on(synch_pbt())
    assert msgspec.msgpack.encode(replayed.scheduler) == msgspec.msgpack.encode(driver.scheduler)


# --- custom_explore_fn -----------------------------------------------------


def halve_n(config: JsonDict) -> JsonDict:
    n = config["n"]
    assert isinstance(n, int)
    config["n"] = n // 2
    config["explored"] = True
    return config


def test_custom_explore_fn_is_asked_through_the_shell_and_its_answer_taken() -> None:
    """The core holds the function's place only: the exploit waits for its
    answer (a `ValuesDrawn` event, which the log keeps), then happens."""
    driver = PolicyDriver(
        PopulationBasedTraining(
            time_attr="training_iteration",
            metric="score",
            mode=Mode.MAX,
            perturbation_interval=1,
            hyperparam_mutations={"n": [0, 2, 4, 6]},
            quantile_fraction=0.5,
            seed=1,
            custom_explore_fn=halve_n,
        ),
        cpus=2,
    )
    low, high = driver.add({"n": 0}), driver.add({"n": 6})
    driver.result(high, score=9.0)
    driver.result(low, score=1.0)  # ranked, but the donor has no checkpoint yet
    driver.result(high, score=9.0)  # the upper one saves one
    # The low trial is exploited: it pauses until the function answered.
    assert driver.result(low, score=1.0) is Decision.PAUSE
    scheduler = scheduler_of(driver)
    wanted = scheduler.wanted()
    assert wanted is not None
    assert wanted.paths == (CUSTOM_EXPLORE_PATH,)
    assert wanted.config["n"] in (4, 6)
    assert scheduler.explore_function is halve_n
    answer = halve_n(dict(wanted.config))
    driver._feed(ValuesDrawn(at=99.0, owner="scheduler", key=wanted.key, values=[answer]))
    trial = driver.trial(low)
    assert trial.spec.config == answer
    assert trial.status is RUNNING  # restarted from the donor's checkpoint
    assert trial.exploited is not None
    assert trial.exploited.checkpoint.storage is CheckpointStorage.PERSISTENT
    assert trial.spec.experiment_tag == f"0@perturbed[n={answer['n']}]"


def test_custom_explore_fn_alone_is_enough_as_in_ray() -> None:
    scheduler = synch_pbt(hyperparam_mutations={}, custom_explore_fn=halve_n)
    assert scheduler.hyperparam_mutations == {}
    with pytest.raises(InvalidFieldError, match="custom_explore_fn"):
        synch_pbt(hyperparam_mutations={})


def test_a_custom_explore_fn_that_is_not_a_function_is_named() -> None:
    with pytest.raises(InvalidFieldError, match="custom_explore_fn"):
        synch_pbt(custom_explore_fn=3)


def test_a_decoded_scheduler_keeps_the_functions_place_not_the_function() -> None:
    scheduler = synch_pbt(custom_explore_fn=halve_n)
    decoded = msgspec.msgpack.decode(
        msgspec.msgpack.encode(scheduler), type=PopulationBasedTraining
    )
    assert decoded.custom_explore_fn is not None
    assert decoded.explore_function is None
    assert decoded == scheduler


# --- PopulationBasedTrainingReplay's reading of a policy file ---------------


def test_a_policy_file_is_read_back_along_its_chain_of_tags_as_ray_reads_it() -> None:
    """From the last line back while each line is the exploit of the
    previous line's donor; the first config is the oldest line's donor's."""
    lines = [
        ["2", "3", 2, 2, {"lr": 9.0}, {"lr": 8.0}],  # another chain: overwritten
        ["1", "0", 4, 4, {"lr": 1.0}, {"lr": 1.5}],
        ["2", "1", 8, 7, {"lr": 1.5}, {"lr": 1.2}],
    ]
    text = "\n".join(json.dumps(line) for line in lines)
    first, changes = policy_changes(text)
    assert first == {"lr": 1.0}
    assert changes == (PolicyChange(4, {"lr": 1.5}), PolicyChange(7, {"lr": 1.2}))


def test_a_line_that_is_not_a_policy_line_is_named() -> None:
    with pytest.raises(InvalidFieldError, match="line 2"):
        policy_changes('["1", "0", 1, 1, {}, {}]\nnot json', "pbt_policy_x.txt")


def test_a_replay_changes_the_config_at_each_step_from_its_own_checkpoint() -> None:
    replay = PopulationBasedTrainingReplay(
        policy_file="p.txt",
        config={"lr": 1.0},
        changes=(PolicyChange(2, {"lr": 2.0}),),
        experiment_tag="replay_p.txt",
    )
    driver = PolicyDriver(replay, cpus=1)
    trial_id = driver.add({"lr": 1.0})
    assert driver.result(trial_id) is Decision.CONTINUE
    assert driver.result(trial_id) is Decision.CONTINUE  # paused, changed, started again
    trial = driver.trial(trial_id)
    assert trial.spec.config == {"lr": 2.0}
    assert trial.spec.experiment_tag == "replay_p.txt@perturbed[lr=2.0000]"
    assert trial.exploited is not None
    assert trial.exploited.checkpoint.training_iteration == 2  # its own, saved at the step
    assert driver.scheduler.debug_string() == "PopulationBasedTraining replay: Step 2, perturb 1"
    with pytest.raises(InvalidFieldError, match="one trial"):
        driver.add({"lr": 1.0})
