"""Refuse a subclass of a built-in policy written against Ray Tune's
imperative scheduler API.

A scheduler of the user's in Ray's style (hooks taking `tune_controller`
first, string verdicts) runs when it subclasses `tunecore.schedulers.
FIFOScheduler` or `TrialScheduler` (`tunecore.shell.imperative`). tunecore's
other schedulers (ASHA, HyperBand, PBT, ...) are pure policies, frozen
msgspec structs whose hooks take the trial's state and return a new policy
(`tunecore.core.schedulers.base.TrialScheduler`): a Ray-style override of
one of their hooks, or a `super().on_trial_result(tune_controller, ...)`
into them, would be called with the core's arguments in Ray's places and
fail mid-run far from its cause. So such a subclass is refused where it is
passed, naming the class, the hook and what to use instead.
"""

from __future__ import annotations

from tunecore.core.schedulers.resource_changing import ResourceChangingScheduler
from tunecore.model.foreign_class import foreign_base
from tunecore.shell.ray_schedulers import RAY_HOOKS, hook_style, is_policy, is_ray_style


def ray_style_hook(scheduler: object) -> str | None:
    """The first hook of `scheduler`'s class written with Ray's signature
    (its first parameter the controller), or None."""
    for hook in RAY_HOOKS:
        method = getattr(type(scheduler), hook, None)
        if callable(method) and hook_style(method, hook) == "ray":
            return hook
    return None


def _not_a_scheduler(scheduler: object) -> str:
    """Why `scheduler` (neither a policy nor a Ray-style subclass) cannot
    run. Ray Tune's own scheduler objects (a library built on Ray Tune
    builds them, in code no import rewriting reaches) are named as such:
    they drive Ray's controller, which tunecore replaces."""
    expected = (
        f"TuneConfig.scheduler={scheduler!r} is invalid: expected one of tunecore.schedulers' "
        "schedulers, or an object of a subclass of tunecore.schedulers.TrialScheduler or "
        "FIFOScheduler"
    )
    base = foreign_base(type(scheduler), "ray.tune.schedulers")
    if base is None:
        return expected
    return (
        f"{expected}; {type(scheduler).__qualname__} is Ray Tune's own scheduler class "
        f"({base.__module__}.{base.__qualname__}), which only Ray Tune runs: build "
        f"tunecore.schedulers.{type(scheduler).__name__}(...) with the same arguments"
    )


def refuse_ray_style_scheduler(scheduler: object) -> object:
    """Return `scheduler`, or raise `ValueError` if it is no scheduler
    tunecore runs (Ray Tune's own scheduler objects among them), one of the
    core's policies with a hook written against Ray's imperative API, or a
    `ResourceChangingScheduler` around a scheduler object in Ray's style
    (the pure wrapper calls its base in the core, where no object runs)."""
    if isinstance(scheduler, ResourceChangingScheduler) and is_ray_style(scheduler.base):
        raise ValueError(
            f"ResourceChangingScheduler(base_scheduler={type(scheduler.base).__qualname__}(...)): "
            "a scheduler in Ray's style cannot be its base (it runs in the shell, the "
            "wrapper in the core); use one of tunecore's schedulers as the base"
        )
    if scheduler is None or is_ray_style(scheduler):
        return scheduler
    if not is_policy(scheduler):
        raise ValueError(_not_a_scheduler(scheduler))
    hook = ray_style_hook(scheduler)
    if hook is None:
        return scheduler
    name = type(scheduler).__qualname__
    bases = ", ".join(base.__name__ for base in type(scheduler).__bases__)
    raise ValueError(
        f"{name}.{hook}(self, tune_controller, ...) is Ray Tune's imperative scheduler API "
        f"on {bases}, a built-in tunecore runs as a pure policy (hooks take the trial's "
        "state and return a new policy: tunecore.core.schedulers.base.TrialScheduler), "
        "which it cannot call that way. Subclass tunecore.schedulers.FIFOScheduler or "
        "TrialScheduler for a scheduler in Ray's style, or stop trials with a Stopper "
        "(RunConfig(stop=...))"
    )
