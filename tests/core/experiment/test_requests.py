"""What the policies wait for from the shell reaches it as commands
(`core.experiment.requests`): `DrawValues` for a user's functions'
values, `AskSearcher` for a searcher object's suggestion; each once, after
the step's other commands, and all of them for a shell taking a state over
(`outstanding`)."""

from __future__ import annotations

from tests.core.experiment.test_step import T0, T1, Run, config
from tunecore.core.experiment.requests import outstanding
from tunecore.core.search.domains import sample_from, uniform
from tunecore.core.search.external import ExternalSearcher
from tunecore.core.search.generator import BasicVariantGenerator
from tunecore.model import (
    Asked,
    AskSearcher,
    Command,
    DrawValues,
    ExperimentInterrupted,
    ExperimentResumed,
    ExperimentStopRequested,
    ResolveResources,
    StartTrial,
    ValuesDrawn,
)


def requests(commands: tuple[Command, ...]) -> list[Command]:
    return [c for c in commands if isinstance(c, DrawValues | AskSearcher)]


def drawing(samples: int) -> Run:
    space = {"x": uniform(0.0, 1.0), "y": sample_from(lambda spec: spec.config.x * 2)}
    return Run(config(), None, BasicVariantGenerator(space, num_samples=samples, seed=0))


def test_a_sample_from_is_drawn_by_command_and_the_next_one_asked_once() -> None:
    run = drawing(2)
    (first,) = outstanding(run.state)  # the first trial's values, before any event
    assert isinstance(first, DrawValues)
    assert (first.owner, first.key, first.paths) == ("searcher", 0, (("y",),))
    x = first.config["x"]
    assert isinstance(x, float)
    # The shell answers first (before it measures the cluster): the trial
    # is made, and the next one's values are asked.
    commands = run.feed(ValuesDrawn(at=run.tick(), owner="searcher", key=0, values=[x * 2]))
    (second,) = requests(commands)
    assert commands[-1] == second
    assert isinstance(second, DrawValues)
    assert second.key == 1
    commands = run.cluster(cpu=2)
    assert [c.trial_id for c in commands if isinstance(c, StartTrial)] == [T0]
    assert requests(commands) == []  # the same wait: not asked twice
    commands = run.feed(ValuesDrawn(at=run.tick(), owner="searcher", key=1, values=[0.0]))
    assert [c.trial_id for c in commands if isinstance(c, StartTrial)] == [T1]
    assert requests(commands) == []  # num_samples reached
    assert outstanding(run.state) == []


def test_resources_from_the_config_are_asked_before_the_next_draw() -> None:
    space = {"y": sample_from(lambda: 1)}
    run = Run(config(resources_from_config=True), None, BasicVariantGenerator(space, num_samples=2))
    commands = run.feed(ValuesDrawn(at=run.tick(), owner="searcher", key=0, values=[1]))
    assert [type(c) for c in commands] == [ResolveResources, DrawValues]  # requests last


def test_a_searcher_object_is_asked_once_per_key_and_never_while_the_experiment_stops() -> None:
    run = Run(config(max_pending_trials=1), None, ExternalSearcher(name="tests:Searcher"))
    assert outstanding(run.state) == []  # it asks only once suggest is called
    (ask,) = requests(run.cluster(cpu=1))
    assert ask == AskSearcher(key=0, trial_id=T0, told=0)
    assert requests(run.feed(ExperimentStopRequested(at=run.tick(), reason="user"))) == []
    assert outstanding(run.state) == []  # stopping: nothing is asked


def test_a_resume_asks_again_what_the_stop_held_back() -> None:
    run = Run(config(max_pending_trials=1), None, ExternalSearcher(name="tests:Searcher"))
    run.cluster(cpu=1)
    run.feed(ExperimentInterrupted(at=run.tick(), reason="interrupted"))
    commands = run.feed(ExperimentResumed(at=run.tick()))
    assert requests(commands) == [AskSearcher(key=0, trial_id=T0, told=0)]
    answer = Asked(at=run.tick(), key=0, trial_id=T0, told=0, config={"x": 1.0})
    commands = run.feed(answer)
    assert requests(commands) == []  # answered, and the one trial waits for resources
