"""`Tuner(..., _tuner_kwargs={...})`: Ray's private way to pass `tune.run`
arguments the Tuner's configs lack (`{"fail_fast": True}` in Ray's Horovod
example; `{"checkpoint_at_end": True, "checkpoint_freq": 1}`,
`{"trial_name_creator": ...}` in users' scripts).

Ray's Tuner calls `tune.run` with the arguments its configs make, then with
these on top, so each one overrides its config's setting. Here each is put
into the config field `tune.run` would have set from it (`fail_fast` ->
`RunConfig.failure_config.fail_fast`, `checkpoint_freq` ->
`CheckpointConfig.checkpoint_frequency`, `config` -> the param space), with
Ray's rules for the deprecated checkpoint arguments, shared with
`tunecore.run` (`legacy_checkpoints`: a value that is 0, False or None
leaves the config as it is). `local_dir` is refused as
Ray 2.60's `tune.run` refuses it; a name `tune.run` does not take is a
`TypeError`, as Ray's call would raise, and the few that drive a run
rather than configure it (`resume`, `restore`, ...) are refused naming what
to use instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel

from tunecore.api.config import RunConfig, TuneConfig
from tunecore.api.legacy_checkpoints import LEGACY_CHECKPOINT_ARGUMENTS, with_legacy_checkpoints

_RUN_CONFIG = frozenset(
    {
        "name",
        "storage_path",
        "storage_filesystem",
        "callbacks",
        "sync_config",
        "stop",
        "verbose",
        "progress_reporter",
        "log_to_file",
        "checkpoint_config",
        "export_formats",
    }
)
_FAILURE_CONFIG = frozenset({"max_failures", "fail_fast"})
_TUNE_CONFIG = frozenset(
    {
        "metric",
        "mode",
        "num_samples",
        "search_alg",
        "scheduler",
        "reuse_actors",
        "max_concurrent_trials",
        "time_budget_s",
        "trial_name_creator",
        "trial_dirname_creator",
        "chdir_to_trial_dir",
        "resources_per_trial",
    }
)
Model = TypeVar("Model", bound=BaseModel)

_NOT_HERE = {
    "run_or_experiment": "pass the trainable to Tuner itself",
    "restore": "start trials from a checkpoint with tunecore.run(restore=...)",
    "resume": "continue an experiment with Tuner.restore(path, trainable=...)",
    "resume_config": "continue an experiment with Tuner.restore(path, trainable=...)",
    "raise_on_failed_trial": "a Tuner returns failed trials in its ResultGrid (result.error); "
    "tunecore.run raises for them",
}


class Configured(NamedTuple):
    """The Tuner's three settings once `_tuner_kwargs` are applied."""

    tune_config: TuneConfig
    run_config: RunConfig
    param_space: Mapping[str, object] | None


def apply_tuner_kwargs(
    kwargs: Mapping[str, Any],
    tune_config: TuneConfig,
    run_config: RunConfig,
    param_space: Mapping[str, object] | None,
) -> Configured:
    """The configs with `kwargs` (Ray's `tune.run` arguments) set on top."""
    unknown = sorted(
        set(kwargs)
        - _RUN_CONFIG
        - _FAILURE_CONFIG
        - _TUNE_CONFIG
        - LEGACY_CHECKPOINT_ARGUMENTS
        - set(_NOT_HERE)
        - {"config", "local_dir"}
    )
    if unknown:
        raise TypeError(
            f"Tuner(_tuner_kwargs=...): {', '.join(map(repr, unknown))} "
            f"{'is not an argument' if len(unknown) == 1 else 'are not arguments'} of tune.run"
        )
    for key, advice in _NOT_HERE.items():
        if key in kwargs:
            raise ValueError(f"Tuner(_tuner_kwargs=...): {key!r} is not applied here; {advice}")
    if kwargs.get("local_dir") is not None:
        raise DeprecationWarning(
            "The `local_dir` argument is deprecated. "
            "You should set the `storage_path` instead. "
            "See the docs: https://docs.ray.io/en/latest/train/user-guides/"
            "persistent-storage.html#setting-the-local-staging-directory"
        )
    run_fields = {key: kwargs[key] for key in _RUN_CONFIG & set(kwargs)}
    failure = {key: kwargs[key] for key in _FAILURE_CONFIG & set(kwargs)}
    if failure:
        run_fields["failure_config"] = _updated(run_config.failure_config, failure)
    base = run_fields.get("checkpoint_config", run_config.checkpoint_config)
    checkpoints = with_legacy_checkpoints(base, kwargs)
    if checkpoints is not base:
        run_fields["checkpoint_config"] = checkpoints
    return Configured(
        tune_config=_updated(tune_config, {key: kwargs[key] for key in _TUNE_CONFIG & set(kwargs)}),
        run_config=_updated(run_config, run_fields),
        param_space=kwargs.get("config", param_space),
    )


def _updated(model: Model, fields: Mapping[str, Any]) -> Model:
    """`model` with `fields` set, validated as a new one would be. Only the
    fields the user set are passed on, so the new one tells the same ones
    apart (`model_fields_set`: a Tuner refuses Ray Train's fields given)."""
    if not fields:
        return model
    given = {name: getattr(model, name) for name in model.model_fields_set}
    return type(model)(**{**given, **fields})
