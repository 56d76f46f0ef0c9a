"""How persisted state names user code, and how a name becomes code again.

Nothing tunecore persists is a pickle, so the event log refers to a
trainable by a string:

- an import path `"package.module:qualname"`, preferred because any
  process that can import the module (a Ray worker) finds it without set-up;
- otherwise a name registered with `register_trainable` in this process.
  Code defined in `__main__`, inside a function, or as a lambda or a
  `functools.partial` has no import path another process could use; the
  script that defines it registers it again when it runs again.

A string the user gives becomes the function or class again with
`resolve_trainable` (which may import). A string read from disk is only
looked up among the names this process registered (`registered_trainable`)
and never imported: a log does not decide what code runs (see
`tunecore.api.restored`).

`trainable_name(obj)` picks the import path when importing it gives back
`obj` itself, and else the name `obj` is registered under; an object not
registered yet is registered automatically under its qualified name (a
`functools.partial` under its function's, as Ray names it; with
`_2`, `_3`, ... appended if another object holds that name), so a script
that passes the same objects in the same order gets the same names on every
run. The registry is process-local and guarded by a lock, since the
in-process executor runs trials in threads.
"""

from __future__ import annotations

import functools
import importlib
import sys
import threading
from collections.abc import Callable
from typing import TypeAlias

from tunecore.core.naming import numbered
from tunecore.model import JsonDict
from tunecore.model.errors import InvalidFieldError, require_name
from tunecore.model.foreign_class import foreign_base
from tunecore.shell.trainable.classapi import ClassTrainable, Trainable
from tunecore.shell.trainable.config_objects import ConfigObjects
from tunecore.shell.trainable.function import FunctionTrainable, function_form
from tunecore.shell.trainable.worker import TrialContext, WorkerTrainable

TrainableTarget: TypeAlias = type[Trainable] | Callable[..., object]

_ACCEPTED = (
    "a function fn(config), fn(config, reporter) or fn(config, checkpoint_dir=None), "
    "or a subclass of tunecore's Trainable"
)

_RAY_TRAINERS = (
    ("ray.train.v2.api.data_parallel_trainer", "DataParallelTrainer"),  # Train V2's trainers
    ("ray.train.base_trainer", "BaseTrainer"),  # Train V1's (RAY_TRAIN_V2_ENABLED=0)
)
_RAY_TRAIN_TRAINER = (
    "is a Ray Train trainer; a Tuner does not take one. Ray 2.60 refuses it too (Train V2, "
    "on by default: \"TuneError: Improper 'run' - not string nor trainable.\"; Ray runs a "
    "V1 trainer only with RAY_TRAIN_V2_ENABLED=0, through Ray Tune's own session). Build the "
    "trainer inside a function trainable, as Ray's docs do, with the callback that reports "
    "its results to the trial:\n"
    "    from tunecore.integration.ray_train import TuneReportCallback\n"
    "    def train_driver_fn(config):\n"
    "        trainer = TorchTrainer(train_fn_per_worker,\n"
    "            train_loop_config=config['train_loop_config'],\n"
    "            scaling_config=ray.train.ScalingConfig(num_workers=2),\n"
    "            run_config=ray.train.RunConfig(callbacks=[TuneReportCallback()]))\n"
    "        trainer.fit()\n"
    "    Tuner(train_driver_fn, param_space={'train_loop_config': {...}})"
)

_lock = threading.Lock()
_registry: dict[str, TrainableTarget] = {}


def register_trainable(
    name: str,
    trainable: TrainableTarget,
    warn: bool = True,  # noqa: ARG001 - Ray's argument, unread in Ray 2.60 too
) -> None:
    """Make `trainable` resolvable as `name` in this process (replacing what
    was registered under `name` before, as Ray does). `warn` is Ray's
    argument, which Ray 2.60 no longer reads either: accepted so a call
    passing it runs."""
    require_name("register_trainable(name)", name)
    if ":" in name:
        raise InvalidFieldError(
            "register_trainable(name)", name, "a name without ':' (a ':' marks an import path)"
        )
    validate_trainable(trainable)
    with _lock:
        _registry[name] = trainable


def registered_trainable(name: str) -> TrainableTarget | None:
    """What this process registered as `name`, if anything. Never imports:
    this is how a name read from disk (an event log) is looked up, since
    data from disk must not decide what code is imported."""
    with _lock:
        return _registry.get(name)


def resolve_trainable(name_or_path: str) -> TrainableTarget:
    """The trainable registered as `name_or_path`, or imported from it when it
    is an import path `"package.module:qualname"`. Only for names the user
    gives (it may import); a name read from a log goes through
    `registered_trainable`."""
    require_name("resolve_trainable(name_or_path)", name_or_path)
    with _lock:
        registered = _registry.get(name_or_path)
        if registered is not None:
            return registered
        known = ", ".join(sorted(_registry)) or "none"
    if ":" not in name_or_path:
        raise ValueError(
            f"unknown trainable {name_or_path!r}: it is not a registered name (registered: "
            f"{known}) and not an import path 'package.module:function'"
        )
    return validate_trainable(_import(name_or_path), where=name_or_path)


def trainable_name(target: TrainableTarget) -> str:
    """The name persisted state uses for `target` (see the module doc)."""
    validate_trainable(target)
    path = _import_path(target)
    if path is not None:
        return path
    named = target.func if isinstance(target, functools.partial) else target
    base = getattr(named, "__qualname__", None) or type(target).__name__
    with _lock:
        for name, registered in _registry.items():
            if registered is target:
                return name
        name, suffix = base, 1
        while name in _registry:
            suffix += 1
            name = numbered(base, suffix)
        _registry[name] = target
        return name


def validate_trainable(target: object, *, where: str | None = None) -> TrainableTarget:
    """`target` if it is an accepted function or a Trainable subclass, else
    an error saying what it is and what is accepted."""
    label = where or repr(target)
    if _is_ray_train_trainer(target):
        raise TypeError(f"{label} {_RAY_TRAIN_TRAINER}")
    if isinstance(target, type):
        if not issubclass(target, Trainable):
            raise TypeError(
                f"{label} is a class but not a subclass of Trainable; expected {_ACCEPTED}"
                + (_RAY_TUNE_TRAINABLE if _is_ray_tune_trainable(target) else "")
            )
        return target
    if not callable(target):
        raise TypeError(f"{label} is of type {type(target).__name__}; expected {_ACCEPTED}")
    function_form(target)
    return target


_RAY_TUNE_TRAINABLE = (
    ". It subclasses Ray Tune's own ray.tune.Trainable (as RLlib's algorithms do), which "
    "only Ray Tune runs. Run it inside a function trainable instead, as RLlib's "
    "rllib/examples/ray_tune/custom_experiment.py does: build it from the config, and "
    "tune.report(algo.train()) once an iteration"
)


def _is_ray_tune_trainable(cls: type) -> bool:
    """Whether `cls` is built on Ray Tune's own `Trainable` (found by name:
    tunecore never imports `ray.tune`)."""
    return foreign_base(cls, "ray.tune", ("Trainable",)) is not None


def _is_ray_train_trainer(target: object) -> bool:
    """Whether `target` is a Ray Train trainer or its class (looked up among
    the modules already imported: one exists only once Ray Train is)."""
    cls = target if isinstance(target, type) else type(target)
    for module, name in _RAY_TRAINERS:
        base = getattr(sys.modules.get(module), name, None)
        if isinstance(base, type) and issubclass(cls, base):
            return True
    return False


def make_worker_trainable(
    target: TrainableTarget | str,
    config: JsonDict,
    context: TrialContext,
    *,
    objects: ConfigObjects | None = None,
) -> WorkerTrainable:
    """The worker trainable for `target` (an object, a registered name or an
    import path): a ClassTrainable for a Trainable subclass, else a
    FunctionTrainable; `objects` are the param space's, which replace their
    placeholders in each config the trial is given."""
    resolved = resolve_trainable(target) if isinstance(target, str) else target
    if isinstance(resolved, type) and issubclass(resolved, Trainable):
        return ClassTrainable(resolved, config, context, objects=objects)
    return FunctionTrainable(resolved, config, context, objects)


def _import(path: str) -> object:
    module_name, _, qualname = path.partition(":")
    if not module_name or not qualname:
        raise ValueError(f"the import path {path!r} must be 'package.module:qualname'")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name or module_name.startswith(f"{exc.name}."):
            raise ValueError(
                f"the import path {path!r} names the module {module_name!r}, "
                f"which cannot be found ({exc})"
            ) from exc
        raise ValueError(f"importing the module {module_name!r} of {path!r} failed: {exc}") from exc
    except ImportError as exc:
        raise ValueError(f"importing the module {module_name!r} of {path!r} failed: {exc}") from exc
    found: object = module
    for attribute in qualname.split("."):
        try:
            found = getattr(found, attribute)
        except AttributeError:
            raise ValueError(
                f"the import path {path!r}: the module {module_name!r} has no {qualname!r}"
            ) from None
    return found


def _import_path(target: object) -> str | None:
    """`"module:qualname"` if that leads back to `target` in this process.

    Only modules already imported are looked at (`target` was defined in
    one), so naming never runs import-time code; `__main__` is excluded
    because it is another module in every other process."""
    module_name = getattr(target, "__module__", None)
    qualname = getattr(target, "__qualname__", None)
    if not isinstance(module_name, str) or not isinstance(qualname, str):
        return None
    module = sys.modules.get(module_name)
    if module is None or module_name == "__main__" or "<" in qualname:
        return None
    found: object = module
    for attribute in qualname.split("."):
        found = getattr(found, attribute, None)
    return f"{module_name}:{qualname}" if found is target else None
