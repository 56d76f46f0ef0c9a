"""The dispatch tables name every type they dispatch on: a new event or
command type without a handler would otherwise fail only when first sent."""

from __future__ import annotations

import importlib
from typing import get_args

from tunecore.model import Command, ExperimentEvent
from tunecore.shell import loop

# `tunecore.core.experiment.step` is also the name of the function the package exports.
step_module = importlib.import_module("tunecore.core.experiment.step")


def test_the_loop_carries_out_every_command_once() -> None:
    assert set(loop._COMMANDS) | set(loop._EXPERIMENT_COMMANDS) == set(get_args(Command))
    assert not set(loop._COMMANDS) & set(loop._EXPERIMENT_COMMANDS)
    for kind in loop._COMMANDS:  # a trial's command names its trial
        assert "trial_id" in kind.__struct_fields__


def test_the_step_handles_every_event() -> None:
    assert set(step_module._HANDLERS) == set(get_args(ExperimentEvent))
