"""`tunecore demo` and `tunecore transitions`: the pure core's trial
lifecycle without an experiment. The demo is one trial's life through the
core, printed event by event with the commands each gives the shell; the
transitions are the lifecycle's table (or its Graphviz graph)."""

from __future__ import annotations

import argparse

from tunecore.cli.errors import EXIT_OK
from tunecore.core import apply, format_transitions, new_trial, transitions_dot
from tunecore.core.checkpoints import checkpoint_dirname
from tunecore.core.results import TRAINING_ITERATION
from tunecore.model import (
    CheckpointPolicy,
    CheckpointRef,
    CheckpointSaved,
    Command,
    DeleteCheckpoint,
    JsonDict,
    Mode,
    Rejection,
    ResultReported,
    SaveCheckpoint,
    StartRequested,
    StartTrial,
    StopTrial,
    TrialEvent,
    TrialFailed,
    TrialRestored,
    TrialSpec,
    TrialState,
)

DEMO_START = 1_700_000_000.0


def _describe(command: Command) -> str:
    """A command in a few words, for the demo's log."""
    name = type(command).__name__
    match command:
        case SaveCheckpoint(storage=storage):
            return f"{name}({storage})"
        case StartTrial(restore_from=CheckpointRef(path=path)):
            return f"{name}(restore_from={path})"
        case DeleteCheckpoint(checkpoint=CheckpointRef(path=path)):
            return f"{name}({path})"
        case StopTrial(error=str()):
            return f"{name}(with an error.txt entry)"
    return name


def _play(out: list[str]) -> TrialState:
    spec = TrialSpec(
        trial_id="demo_00000",
        trainable_name="train_mnist",
        config={"lr": 0.01},
        experiment_tag="0_lr=0.01",
        stopping_criterion={"training_iteration": 6},
        checkpoint_policy=CheckpointPolicy(
            frequency=2, num_to_keep=1, score_attribute="loss", score_order=Mode.MIN
        ),
        max_failures=1,
    )
    trial = new_trial(spec)
    clock = DEMO_START
    losses = {1: 0.9, 2: 0.5, 3: 0.6, 4: 0.4, 5: 0.45, 6: 0.3}

    def feed(event: TrialEvent) -> tuple[Command, ...]:
        nonlocal trial
        outcome = apply(trial, event)
        if isinstance(outcome, Rejection):
            out.append(f"  rejected: {outcome}")
            return ()
        trial = outcome.state
        commands = ", ".join(_describe(c) for c in outcome.commands) or "-"
        out.append(f"{type(event).__name__:<16} -> {trial.status:<10} {commands}")
        for command in outcome.commands:
            if isinstance(command, SaveCheckpoint):
                iteration = trial.last_result.get(TRAINING_ITERATION, 0)
                assert isinstance(iteration, int)
                path = checkpoint_dirname(iteration)
                feed(
                    CheckpointSaved(
                        trial_id=spec.trial_id,
                        at=clock,
                        checkpoint=CheckpointRef(
                            storage=command.storage,
                            path=path,
                            training_iteration=iteration,
                            metrics=trial.last_result,
                        ),
                    )
                )
        return outcome.commands

    feed(StartRequested(trial_id=spec.trial_id, at=clock))
    for iteration in (1, 2, 3):
        clock += 1.0
        result: JsonDict = {"training_iteration": iteration, "loss": losses[iteration]}
        feed(ResultReported(trial_id=spec.trial_id, at=clock, result=result))
    clock += 0.5
    feed(TrialFailed(trial_id=spec.trial_id, at=clock, error="RuntimeError: worker lost"))
    feed(StartRequested(trial_id=spec.trial_id, at=clock))
    feed(TrialRestored(trial_id=spec.trial_id, at=clock))
    for iteration in (3, 4, 5, 6):
        clock += 1.0
        result = {"training_iteration": iteration, "loss": losses[iteration]}
        feed(ResultReported(trial_id=spec.trial_id, at=clock, result=result))
    return trial


def run_demo() -> str:
    """The demo's output as text."""
    out: list[str] = ["tunecore demo: one trial's life through the pure core", ""]
    trial = _play(out)
    kept = ", ".join(c.path for c in trial.checkpoints.persistent)
    loss = trial.metric_analysis["loss"]
    out += [
        "",
        f"final status: {trial.status}, failures: {trial.num_failures}",
        f"checkpoints kept (best 1 by min loss, plus the newest): {kept}",
        f"loss: min {loss.min:g}, max {loss.max:g}, last {loss.last:g}, avg {loss.avg:.4f}",
    ]
    return "\n".join(out)


def demo_command(_args: argparse.Namespace) -> int:
    print(run_demo())
    return EXIT_OK


def transitions_command(args: argparse.Namespace) -> int:
    print(transitions_dot() if args.dot else format_transitions())
    return EXIT_OK
