"""Trainables: the user's training code as the worker runs it.

User code calls `report`, `get_checkpoint`, `get_context` (and the legacy
`checkpoint_dir`) from inside a training function, or subclasses
`Trainable`. Executors build one `WorkerTrainable` per trial with
`make_worker_trainable` and drive it; persisted state names the code with
`trainable_name` and finds it again with `resolve_trainable`.

Nothing here imports Ray: the same code runs inside a Ray actor, in a thread
of the in-process executor, and in tests.
"""

from tunecore.core.results import RESULT_DUPLICATE
from tunecore.shell.trainable.checkpoint import Checkpoint
from tunecore.shell.trainable.classapi import ClassTrainable, Trainable
from tunecore.shell.trainable.errors import TrainableError
from tunecore.shell.trainable.function import FunctionForm, FunctionTrainable, function_form
from tunecore.shell.trainable.registry import (
    TrainableTarget,
    make_worker_trainable,
    register_trainable,
    registered_trainable,
    resolve_trainable,
    trainable_name,
    validate_trainable,
)
from tunecore.shell.trainable.session import (
    StatusReporter,
    checkpoint_dir,
    get_checkpoint,
    get_context,
    report,
)
from tunecore.shell.trainable.worker import TrialContext, WorkerTrainable

__all__ = [
    "RESULT_DUPLICATE",
    "Checkpoint",
    "ClassTrainable",
    "FunctionForm",
    "FunctionTrainable",
    "StatusReporter",
    "Trainable",
    "TrainableError",
    "TrainableTarget",
    "TrialContext",
    "WorkerTrainable",
    "checkpoint_dir",
    "function_form",
    "get_checkpoint",
    "get_context",
    "make_worker_trainable",
    "register_trainable",
    "registered_trainable",
    "report",
    "resolve_trainable",
    "trainable_name",
    "validate_trainable",
]
