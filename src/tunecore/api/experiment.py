"""`Experiment`: Ray Tune's experiment specification, for `run_experiments`.

Ray Tune scripts written before `Tuner` describe an experiment as
`Experiment(name, run, stop=..., config=..., ...)` and run one or more with
`tune.run_experiments`. Here an `Experiment` only holds those arguments,
checked as Ray checks them; `tunecore.run` runs it (`run_experiments`
hands each one to it), so both spellings run the same experiment.
"""

from __future__ import annotations

import datetime
import os
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tunecore.api.config import CheckpointConfig, SyncConfig, budget_seconds
from tunecore.api.errors import TuneError
from tunecore.api.restored import Trainable
from tunecore.core.naming import display_name
from tunecore.shell.stoppers import StopSetting
from tunecore.shell.storage.resolve import DEFAULT_ROOT, uri_scheme
from tunecore.shell.trainable import trainable_name
from tunecore.shell.trainable.placement_group import PlacementGroupFactory
from tunecore.shell.trial_view import Trial

PUBLIC_KEYS = frozenset({"stop", "num_samples", "time_budget_s"})
"""The settings Ray shows searchers and schedulers (`public_spec`)."""


class Experiment:
    """One experiment's settings, with Ray's arguments (those of
    `tune.run` that belong to one experiment). `run` is the trainable: a
    function, a `Trainable` class, or a registered name."""

    def __init__(
        self,
        name: str | None,
        run: Trainable,
        *,
        stop: StopSetting = None,
        time_budget_s: float | datetime.timedelta | None = None,
        config: Mapping[str, object] | None = None,
        resources_per_trial: Mapping[str, Any] | PlacementGroupFactory | None = None,
        num_samples: int = 1,
        storage_path: str | None = None,
        storage_filesystem: object = None,
        sync_config: SyncConfig | Mapping[str, Any] | None = None,
        checkpoint_config: CheckpointConfig | Mapping[str, Any] | None = None,
        trial_name_creator: Callable[[Trial], str] | None = None,
        trial_dirname_creator: Callable[[Trial], str] | None = None,
        log_to_file: bool | str | tuple[str, str] = False,
        export_formats: Sequence[str] | None = None,
        max_failures: int = 0,
        restore: str | None = None,
        local_dir: str | None = None,
    ) -> None:
        if config is not None and not isinstance(config, dict):
            raise ValueError(
                f"Experiment(config=...) must be a dict, got {type(config).__name__}: "
                "convert your search space to a dict before passing it in"
            )
        self.name = name
        """The experiment's name (None: tunecore's default, the trainable's
        name and the time)."""
        self.run = run
        self.arguments: dict[str, Any] = {
            "name": self.name,
            "stop": stop,
            "time_budget_s": budget_seconds(time_budget_s),
            "config": config,
            "resources_per_trial": resources_per_trial,
            "num_samples": num_samples,
            "storage_path": storage_path if storage_path is not None else local_dir,
            "storage_filesystem": storage_filesystem,
            "sync_config": (
                SyncConfig(**sync_config) if isinstance(sync_config, Mapping) else sync_config
            ),
            "checkpoint_config": (
                CheckpointConfig(**checkpoint_config)
                if isinstance(checkpoint_config, Mapping)
                else checkpoint_config
            ),
            "trial_name_creator": trial_name_creator,
            "trial_dirname_creator": trial_dirname_creator,
            "log_to_file": log_to_file,
            "export_formats": export_formats,
            "max_failures": max_failures,
            "restore": None
            if restore is None
            else Path(restore).expanduser().absolute().as_posix(),
        }
        """`tunecore.run`'s keyword arguments for this experiment."""

    @classmethod
    def from_json(cls, name: str, spec: Mapping[str, Any]) -> Experiment:
        """The experiment a `run_experiments` dict describes (`{"run": ...,
        "stop": ..., ...}`); an unknown key is a `TuneError` naming it."""
        if "run" not in spec:
            raise TuneError(f"Experiment {name!r}: no trainable specified (its 'run' key)")
        settings = dict(spec)
        run = settings.pop("run")
        try:
            return cls(name, run, **settings)
        except TypeError as error:
            raise TuneError(
                f"Experiment {name!r} could not be built from {sorted(spec)}: {error}"
            ) from None

    @property
    def spec(self) -> dict[str, Any]:
        """Ray's spec dict: the settings, `run` by its name."""
        return {"run": self.run_identifier, **self.arguments}

    @property
    def public_spec(self) -> dict[str, Any]:
        """The settings searchers and schedulers are shown, as in Ray."""
        return {key: value for key, value in self.arguments.items() if key in PUBLIC_KEYS}

    @property
    def run_identifier(self) -> str:
        """The trainable's name: a registered name as given, else the
        function's or class's name, as Ray names it."""
        return self.run if isinstance(self.run, str) else _default_name(self.run)

    @property
    def path(self) -> str | None:
        """Where the experiment's directory is, as Ray's `Experiment.path`
        gives it: the storage path (`~/tunecore_results` by default, a
        local path made absolute, a URI as written) joined with the name;
        None while the name is None (tunecore names such an experiment when
        it runs it, after the trainable and the time)."""
        if self.name is None:
            return None
        return experiment_path(self.arguments["storage_path"], self.name)

    @property
    def checkpoint_config(self) -> CheckpointConfig | None:
        return self.arguments["checkpoint_config"]  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"Experiment({self.name!r}, {self.run_identifier!r})"


def experiment_path(storage_path: object, name: str) -> str:
    """The directory of experiment `name` under `storage_path`, without
    touching the storage: a URI other than `file://` stays a URI."""
    raw = DEFAULT_ROOT if storage_path is None else os.fspath(storage_path)  # type: ignore[call-overload]
    scheme = uri_scheme(raw)
    if scheme is None:
        return os.path.join(os.path.abspath(os.path.expanduser(raw)), name)
    if scheme.lower() == "file":
        return os.path.join(urllib.parse.urlparse(raw).path, name)
    return f"{raw.rstrip('/')}/{name}"


def _default_name(run: Trainable) -> str:
    if isinstance(run, str):
        return run
    return display_name(trainable_name(run))


def experiment_list(experiments: object) -> list[Experiment]:
    """Ray's accepted forms as a list: one `Experiment`, a list of them, or
    a dict of experiment name to spec dict (`Experiment.from_json`)."""
    if isinstance(experiments, Experiment):
        return [experiments]
    if isinstance(experiments, Mapping):
        return [Experiment.from_json(name, spec) for name, spec in experiments.items()]
    if isinstance(experiments, list | tuple) and all(
        isinstance(one, Experiment) for one in experiments
    ):
        return list(experiments)
    raise TuneError(
        f"run_experiments(experiments={experiments!r}): give an Experiment, a list of "
        "them, or a dict of name to spec dict"
    )
