"""Ray Train's trainer modules under their rewritten names.

A script's rewritten imports turn `ray.train.torch` into `tunecore.torch`
(and `ray.train.lightning`, `.huggingface.transformers`, `.tensorflow`,
`.xgboost`, `.lightgbm`, `.horovod`, `.v2...`, `.data_parallel_trainer`,
`.base_trainer`, `.trainer`, `.backend`, `.collective`), and
`ray.train.examples.pytorch` into `tunecore.examples.pytorch` (likewise
`.tf`, `.horovod`, `.pytorch_geometric`: Ray Train's example packages,
whose training functions report through `ray.train` in Ray Train's workers).
tunecore has no trainers of its own, so each of those names (and every
module under it) is Ray Train's module passed through: its attributes are Ray's, except that a
trainer class is a subclass converting tunecore's config objects
(ray_train_configs), and a submodule is the passed-through one. None of
these names is a tunecore module otherwise: `tunecore.xgboost` is Ray
Train's `ray.train.xgboost` (its trainer and `RayTrainReportCallback`),
while Ray Tune's callbacks stay at `tunecore.integration.xgboost`, and
`tunecore.examples` is tunecore's package of Ray Tune's example modules
(`tunecore.examples.mnist_pytorch`), none of whose names is one of Ray
Train's example packages.

A passed-through module imports Ray's when it is imported itself, never
with `import tunecore`; where Ray Train or the framework is missing that
import is an ImportError naming what to install.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
from types import ModuleType

from tunecore import _finder as finder

PASSED_THROUGH: dict[str, str] = {
    "torch": "torch",
    "lightning": "lightning",
    "huggingface": "transformers",
    "tensorflow": "tensorflow",
    "xgboost": "xgboost",
    "lightgbm": "lightgbm",
    "horovod": "horovod",
    "v2": "",
    "data_parallel_trainer": "",
    "base_trainer": "",
    "trainer": "",
    "backend": "",
    "collective": "",
    "examples.pytorch": "torch torchvision",
    "examples.tf": "tensorflow",
    "examples.horovod": "horovod torchvision",
    "examples.pytorch_geometric": "torch_geometric",
}
"""Ray Train's modules `tunecore.<name>` passes through (`ray.train.<name>`),
with the framework packages each needs besides Ray Train."""


def _passed_through_prefix(name: str) -> str | None:
    """The key of `PASSED_THROUGH` that the `tunecore...` module `name` is
    or lies under, if any."""
    for prefix in PASSED_THROUGH:
        module = f"tunecore.{prefix}"
        if name == module or name.startswith(module + "."):
            return prefix
    return None


def ray_name(name: str) -> str | None:
    """The Ray Train module a `tunecore...` module name passes through to,
    if it is one of them."""
    if _passed_through_prefix(name) is None:
        return None
    return "ray.train." + name.removeprefix("tunecore.")


def tunecore_name(name: str) -> str:
    """The rewritten name of a module under `ray.train.`."""
    return "tunecore." + name.removeprefix("ray.train.")


class _Attributes:
    """A passed-through module's `__getattr__`: Ray's attribute, with
    trainers converting tunecore's configs and Ray Train's submodules
    passed through too."""

    def __init__(self, ray_module: ModuleType, name: str) -> None:
        self._ray_module = ray_module
        self._name = name
        self._trainers: dict[str, type] = {}

    def __call__(self, attribute: str) -> object:
        try:
            value = getattr(self._ray_module, attribute)
        except AttributeError:
            raise AttributeError(
                f"module {self._name!r} ({self._ray_module.__name__}) has no attribute "
                f"{attribute!r}"
            ) from None
        if isinstance(value, ModuleType) and value.__name__.startswith("ray.train."):
            passed = tunecore_name(value.__name__)
            if ray_name(passed) is not None:
                return importlib.import_module(passed)
        if isinstance(value, type) and _is_trainer(value):
            trainer = self._trainers.get(attribute)
            if trainer is None:
                from tunecore.api.ray_train_configs import (  # noqa: PLC0415 - pydantic, on use
                    accepting_tunecore_configs,
                )

                trainer = accepting_tunecore_configs(value, self._name, attribute)
                self._trainers[attribute] = trainer
            return trainer
        return value


def _is_trainer(cls: type) -> bool:
    """Whether `cls` is one of Ray Train's trainers, V1's or V2's."""
    from ray.train.base_trainer import BaseTrainer  # noqa: PLC0415 - loaded with any trainer
    from ray.train.v2.api.data_parallel_trainer import (  # noqa: PLC0415
        DataParallelTrainer,
    )

    return issubclass(cls, BaseTrainer | DataParallelTrainer)


class _PassThroughLoader(importlib.abc.Loader):
    """Makes `tunecore.<name>...` the view of `ray.train.<name>...`."""

    def __init__(self, ray_module_name: str) -> None:
        self._ray_module_name = ray_module_name

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        try:
            ray_module = importlib.import_module(self._ray_module_name)
        except ImportError as error:
            prefix = _passed_through_prefix(name)
            assert prefix is not None  # the finder made this loader for a passed-through name
            framework = PASSED_THROUGH[prefix]
            install = f"pip install 'ray[train]' {framework}".strip()
            raise ImportError(
                f"{name} is Ray Train's {self._ray_module_name}, which cannot be imported "
                f"here ({error}); tunecore includes no trainers of its own: {install}",
                name=name,
            ) from error
        namespace = vars(module)
        namespace["__getattr__"] = _Attributes(ray_module, name)
        namespace["__dir__"] = lambda: sorted(dir(ray_module))
        namespace["__doc__"] = ray_module.__doc__
        if hasattr(ray_module, "__all__"):
            namespace["__all__"] = list(ray_module.__all__)


def _pass_through(fullname: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of a passed-through module (a package: the modules under it
    are found here too); None for any other name."""
    ray_module_name = ray_name(fullname)
    if ray_module_name is None:
        return None
    spec = importlib.machinery.ModuleSpec(fullname, _PassThroughLoader(ray_module_name))
    spec.submodule_search_locations = []
    return spec


def install_finder() -> None:
    """Pass the modules through, once no file of tunecore answers. Installed
    before the finder of the modules tunecore leaves out (`_not_provided`),
    which refuses every other module under `tunecore.examples`."""
    finder.install_finder(_pass_through)
