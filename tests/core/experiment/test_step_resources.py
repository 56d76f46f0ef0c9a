"""Resources in the core: requests worked out from each trial's config by
the shell, placement groups counted as their bundles' sum, and requests
that can never fit the cluster."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.experiment.test_step import T0, T1, Run, config, searcher, starts
from tunecore.core.experiment import step
from tunecore.core.resources import never_fits
from tunecore.model import (
    ClusterResourcesChanged,
    ExperimentResumed,
    Rejection,
    ResolveResources,
    Resources,
    ResourcesUpdateRequested,
    ResultReported,
    StopRequested,
    Tick,
    TrialStatus,
)

NODE = Resources(cpu=4, memory=8e9)


def cluster_of(*nodes: Resources) -> Resources:
    return Resources(bundles=nodes)


def group(*cpus: float, strategy: str = "PACK") -> Resources:
    return Resources(bundles=tuple(Resources(cpu=n) for n in cpus), strategy=strategy)


def test_a_trial_whose_resources_come_from_its_config_waits_for_the_answer() -> None:
    run = Run(config(resources_from_config=True), searcher=searcher(2))
    commands = run.cluster(cpu=4)
    assert [c for c in commands if isinstance(c, ResolveResources)] == [
        ResolveResources(trial_id=T0),
        ResolveResources(trial_id=T1),
    ]
    assert starts(commands) == []
    assert not run.state.done  # no dead end while the shell works them out
    answer = ResourcesUpdateRequested(trial_id=T1, at=run.tick(), resources=Resources(cpu=3))
    assert starts(run.feed(answer)) == [T1]
    assert run.state.used.cpu == 3
    answer = ResourcesUpdateRequested(trial_id=T0, at=run.tick(), resources=Resources(cpu=2))
    assert starts(run.feed(answer)) == []  # 2 CPUs do not fit in the 1 left


def test_an_answer_that_never_fits_fails_only_that_trial() -> None:
    run = Run(config(resources_from_config=True), searcher=searcher(2))
    run.cluster(cpu=2)
    run.feed(ResourcesUpdateRequested(trial_id=T0, at=run.tick(), resources=Resources(cpu=64)))
    trial = run.state.trials[T0]
    assert trial.status is TrialStatus.ERROR
    assert "requested 64 CPUs" in (trial.error_message or "")
    run.feed(ResourcesUpdateRequested(trial_id=T1, at=run.tick(), resources=Resources(cpu=1)))
    assert run.state.trials[T1].status is TrialStatus.RUNNING


def test_a_resume_asks_again_for_what_was_never_answered() -> None:
    run = Run(config(resources_from_config=True), searcher=searcher(1))
    run.cluster(cpu=2)
    commands = run.feed(ExperimentResumed(at=run.tick()))
    assert ResolveResources(trial_id=T0) in commands


def test_a_placement_group_holds_the_sum_of_its_bundles() -> None:
    run = Run(config(resources_per_trial=group(1, 2)), searcher=searcher(2))
    commands = run.cluster(cpu=4)
    assert starts(commands) == [T0]  # 3 CPUs held: the second group waits
    assert run.state.used.cpu == 3


def test_memory_is_counted_against_the_cluster_memory() -> None:
    asks = Resources(cpu=1, memory=3e9, object_store_memory=1e9)
    run = Run(config(resources_per_trial=asks), searcher=searcher(3))
    total = Resources(cpu=8, memory=7e9, object_store_memory=8e9)
    commands = run.feed(ClusterResourcesChanged(at=run.tick(), total=total))
    assert starts(commands) == [T0, T1]  # a third 3 GB trial does not fit in 7 GB
    assert run.state.used.memory == 6e9


def test_a_bundle_larger_than_every_node_never_fits() -> None:
    cluster = cluster_of(NODE, NODE)
    assert never_fits(group(2, 2), cluster) is None
    message = never_fits(group(1, 5), cluster)
    assert message is not None
    assert "a bundle of 5 CPUs" in message
    assert "the largest has 4 CPUs" in message


def test_strict_placements_need_a_node_for_the_whole_or_one_per_bundle() -> None:
    cluster = cluster_of(NODE, NODE)
    assert never_fits(group(3, 3, strategy="STRICT_PACK"), cluster) is not None
    assert never_fits(group(2, 2, strategy="STRICT_PACK"), cluster) is None
    assert never_fits(group(1, 1, 1, strategy="STRICT_SPREAD"), cluster) is not None
    assert never_fits(group(1, 1, strategy="STRICT_SPREAD"), cluster) is None


def test_a_group_larger_than_the_whole_cluster_never_fits_without_known_nodes() -> None:
    message = never_fits(group(2, 3), Resources(cpu=4))
    assert message is not None
    assert message.startswith("Insufficient cluster resources to launch trial")
    assert "5 CPUs" in message


def test_a_trial_whose_bundle_fits_no_node_ends_in_error() -> None:
    run = Run(config(resources_per_trial=group(1, 5)), searcher=searcher(1))
    run.feed(ClusterResourcesChanged(at=run.tick(), total=cluster_of(NODE, NODE)))
    trial = run.state.trials[T0]
    assert trial.status is TrialStatus.ERROR
    assert "no node of the cluster" in (trial.error_message or "")


def test_a_request_of_bundles_sums_them() -> None:
    asks = Resources(
        bundles=(Resources(cpu=1, custom={"tpu": 1}), Resources(cpu=0.5, gpu=1, memory=2.0)),
        strategy="SPREAD",
    )
    assert (asks.cpu, asks.gpu, asks.memory, asks.custom) == (1.5, 1.0, 2.0, {"tpu": 1.0})
    assert asks.summary().endswith("in 2 bundles (SPREAD)")


Action = tuple[str, int, float]

actions = st.lists(
    st.tuples(
        st.sampled_from(["answer", "result", "done", "stop", "tick"]),
        st.integers(0, 7),
        st.sampled_from([0.5, 1.0, 2.0, 3.0, 9.0]),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(actions, st.integers(1, 8), st.integers(1, 3))
def test_per_config_resources_hold_the_invariants_and_every_run_ends(
    script: list[Action], trials: int, cpus: int
) -> None:
    """Answers, results, stops and ticks in any order: never more in use
    than the cluster has, no trial runs before its answer, and once every
    question is answered and every trial ends, the experiment is done."""
    run = Run(config(resources_from_config=True, max_pending_trials=2), searcher=searcher(trials))
    asked: list[str] = []

    def feed(event: Any) -> None:
        outcome = step(run.state, event)
        if isinstance(outcome, Rejection):
            return
        run.state, commands = outcome
        asked.extend(c.trial_id for c in commands if isinstance(c, ResolveResources))
        state = run.state
        assert state.total is not None
        assert state.used.cpu <= state.total.cpu + 1e-9
        for trial in state.trials.values():
            assert not (trial.awaiting_resources and trial.status is TrialStatus.RUNNING)

    feed(ClusterResourcesChanged(at=run.tick(), total=Resources(cpu=cpus)))
    for kind, index, amount in script:
        ids = sorted(run.state.trials)
        if not ids:
            break
        trial_id = ids[index % len(ids)]
        if kind == "answer" and asked:
            answered = asked.pop(index % len(asked))
            feed(
                ResourcesUpdateRequested(
                    trial_id=answered, at=run.tick(), resources=Resources(cpu=amount)
                )
            )
        elif kind in ("result", "done"):
            feed(ResultReported(trial_id=trial_id, at=run.tick(), result={"done": kind == "done"}))
        elif kind == "stop":
            feed(StopRequested(trial_id=trial_id, at=run.tick()))
        else:
            feed(Tick(at=run.tick()))
    for _ in range(4 * trials + 4):  # the shell answers; every running trial ends
        if run.state.done:
            break
        while asked:
            feed(
                ResourcesUpdateRequested(
                    trial_id=asked.pop(0), at=run.tick(), resources=Resources(cpu=1)
                )
            )
        running = [t for t in run.state.trials.values() if t.status is TrialStatus.RUNNING]
        for trial in running:
            feed(ResultReported(trial_id=trial.trial_id, at=run.tick(), result={"done": True}))
        feed(Tick(at=run.tick()))
    assert run.state.done, run.state.error
