"""The experiment as a pure state machine: `step(state, event)`."""

from tunecore.core.experiment.state import (
    ExperimentConfig,
    ExperimentState,
    trial_id_of,
    trial_number,
    trials_in_order,
)
from tunecore.core.experiment.step import Stepped, new_experiment, step

__all__ = [
    "ExperimentConfig",
    "ExperimentState",
    "Stepped",
    "new_experiment",
    "step",
    "trial_id_of",
    "trial_number",
    "trials_in_order",
]
