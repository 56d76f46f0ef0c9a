"""`with_parameters` and `with_resources`: a trainable with something
attached, as Ray Tune spells them.

- `with_parameters(trainable, **objects)` hands large objects (a dataset, a
  model) to every trial without putting them in the config: a function gets
  them as keyword arguments, a `Trainable` class in `setup(config,
  **objects)`. With Ray they are put once in Ray's object store
  (`publish_parameters`, when the executor starts) and each worker fetches
  them once; in-process, the trials share the driver's objects. They are
  never persisted: the event log names the trainable
  (`with_parameters(train)`), which a new process cannot resolve, so
  `Tuner.restore` needs the trainable passed again, as in Ray.
- `with_resources(trainable, resources)` attaches what each trial asks for:
  a dict, a `PlacementGroupFactory`, or a function of the config returning
  either (see `tunecore.shell.trainable.resources`).

The user's function or class is never modified. A class is subclassed, as
Ray does. `with_parameters` wraps a function in a callable with the
signature the trainable sees. `with_resources` wraps it in a function that
looks like it (`functools.wraps`: its name, module and signature), because
Ray returns the function itself there (marked with the resources): the
result is still a function to `ray.remote`, and the experiment is named
after it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from tunecore.shell.trainable.classapi import Trainable
from tunecore.shell.trainable.placement_group import from_ray
from tunecore.shell.trainable.resources import WITH_RESOURCES, as_resources, is_fixed_request

_PARAMETERS = "_tunecore_parameters"
_INNER = "_tunecore_inner"


class _Parameters:
    """The objects given to `with_parameters`, in the driver and in each
    worker. Pickled (sent to a Ray worker) it carries object-store refs once
    `publish` ran, so the objects are copied into the store once, not once
    per worker; in a worker, `get` fetches them once."""

    def __init__(self, values: dict[str, Any]) -> None:
        self._values: dict[str, Any] | None = values
        self._refs: dict[str, Any] | None = None
        self._session: str | None = None  # the Ray session the refs belong to

    def publish(self) -> None:
        """Put the objects in Ray's object store (Ray must be running),
        once per Ray session: refs do not outlive `ray.shutdown()`."""
        if self._values is None:
            return
        import ray  # noqa: PLC0415 - only the Ray executor publishes

        context = ray.get_runtime_context()  # a new local Ray has a new node id,
        session = f"{context.get_node_id()}/{context.get_job_id()}"  # a new driver a job id
        if self._refs is None or session != self._session:
            self._refs = {name: ray.put(value) for name, value in self._values.items()}
            self._session = session

    def get(self) -> dict[str, Any]:
        if self._values is None:
            import ray  # noqa: PLC0415 - a worker that received refs has Ray

            refs = self._refs or {}
            self._values = dict(zip(refs, ray.get(list(refs.values())), strict=True))
        return self._values

    def __getstate__(self) -> dict[str, Any]:
        if self._refs is not None:
            return {"refs": self._refs}
        return {"values": self._values}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._refs = state.get("refs")
        self._values = state.get("values")
        self._session = None


class _FunctionWrapper:
    """A training function with objects or resources attached. It shows the
    signature of the function minus the attached keyword arguments, so the
    function's form (`fn(config)`, `fn(config, checkpoint_dir=None)`) is
    read as the user wrote it."""

    def __init__(
        self, fn: Callable[..., object], label: str, parameters: _Parameters | None
    ) -> None:
        self._fn = fn
        self._parameters = parameters
        # Bound to None, not to the objects: the signature travels with the
        # wrapper to every Ray worker, and the objects must not.
        names = {} if parameters is None else dict.fromkeys(parameters.get())
        self.__signature__ = inspect.signature(functools.partial(fn, **names))
        self.__qualname__ = self.__name__ = f"{label}({_name(fn)})"
        setattr(self, _INNER, fn)
        setattr(self, _PARAMETERS, parameters)
        attached = getattr(fn, WITH_RESOURCES, None)  # with_parameters(with_resources(...))
        if attached is not None:
            setattr(self, WITH_RESOURCES, attached)

    def __call__(self, config: object, **kwargs: object) -> object:
        objects = {} if self._parameters is None else self._parameters.get()
        return self._fn(config, **kwargs, **objects)

    def __repr__(self) -> str:
        return f"<trainable {self.__qualname__}>"


def _name(target: object) -> str:
    return str(getattr(target, "__qualname__", None) or type(target).__name__)


def _check_trainable(where: str, trainable: object) -> None:
    if inspect.isclass(trainable) and not issubclass(trainable, Trainable):
        raise ValueError(
            f"{where} only works with function trainables or subclasses of tunecore's "
            f"Trainable; got the class {trainable.__qualname__}"
        )
    if not callable(trainable):
        raise ValueError(
            f"{where} only works with function trainables or subclasses of tunecore's "
            f"Trainable; got {trainable!r} of type {type(trainable).__name__}"
        )


def with_parameters(trainable: Any, **objects: Any) -> Any:
    """`trainable` with `objects` passed to every trial (see the module doc)."""
    _check_trainable("with_parameters()", trainable)
    parameters = _Parameters(dict(objects))
    if inspect.isclass(trainable):
        base = trainable

        class _WithParameters(base):  # type: ignore[valid-type,misc]
            def setup(self, config: Any, **kwargs: Any) -> None:
                super().setup(config, **kwargs, **parameters.get())

        _WithParameters.__name__ = _WithParameters.__qualname__ = (
            f"with_parameters({base.__qualname__})"
        )
        setattr(_WithParameters, _PARAMETERS, parameters)
        setattr(_WithParameters, _INNER, base)
        return _WithParameters
    return _FunctionWrapper(trainable, "with_parameters", parameters)


def with_resources(trainable: Any, resources: Any) -> Any:
    """`trainable` asking for `resources` in each trial: a dict, a
    `PlacementGroupFactory`, a `ScalingConfig`, or a function of the trial's
    config returning one of them (Ray's own `PlacementGroupFactory`, which
    a library built on Ray Tune hands over, is taken as tunecore's)."""
    _check_trainable("with_resources()", trainable)
    resources = from_ray(resources)
    if is_fixed_request(resources):
        as_resources(resources, "with_resources(resources)")  # bad input fails here
    elif not callable(resources):
        raise ValueError(
            f"with_resources(resources={resources!r}) is invalid: expected a dict, a "
            "PlacementGroupFactory, a ScalingConfig, or a function of the config returning "
            "one of them"
        )
    if inspect.isclass(trainable):
        base = trainable

        class _WithResources(base):  # type: ignore[valid-type,misc]
            @classmethod
            def default_resource_request(cls, config: Any) -> object:
                if is_fixed_request(resources):
                    return resources
                return resources(config)

        _WithResources.__name__ = _WithResources.__qualname__ = (
            f"with_resources({base.__qualname__})"
        )
        setattr(_WithResources, WITH_RESOURCES, resources)
        setattr(_WithResources, _INNER, base)
        return _WithResources

    @functools.wraps(trainable)
    def asking(config: Any, *args: Any, **kwargs: Any) -> Any:
        return trainable(config, *args, **kwargs)

    setattr(asking, WITH_RESOURCES, resources)
    return asking


def publish_parameters(trainable: object) -> None:
    """Put the objects of every `with_parameters` in `trainable` into Ray's
    object store, once (the Ray executor calls this when Ray is up)."""
    current: object = trainable
    while current is not None:
        parameters = getattr(current, _PARAMETERS, None)
        if isinstance(parameters, _Parameters):
            parameters.publish()
        current = getattr(current, _INNER, None)
