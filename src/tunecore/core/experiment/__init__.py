"""The experiment as a pure state machine: `step(state, event)`."""

from tunecore.core.experiment.state import (
    ExperimentConfig,
    ExperimentState,
    trial_id_of,
    trial_number,
    trials_in_order,
)
from tunecore.core.experiment.step import (
    Stepped,
    SteppedWithChanges,
    new_experiment,
    step,
    step_with_changes,
)

__all__ = [
    "ExperimentConfig",
    "ExperimentState",
    "Stepped",
    "SteppedWithChanges",
    "new_experiment",
    "step",
    "step_with_changes",
    "trial_id_of",
    "trial_number",
    "trials_in_order",
]
