"""Refuse a scheduler written against Ray Tune's imperative scheduler API.

Ray's `TrialScheduler` hooks take the run's controller first
(`on_trial_result(tune_controller, trial, result)`, `trial_runner` in older
Ray) and return a string verdict; tunecore's schedulers are pure policies
whose hooks take the trial's state and return a new policy
(`tunecore.core.schedulers.base.TrialScheduler`). A Ray-style subclass would
be called with tunecore's arguments in Ray's places and fail mid-run on a
`KeyError` far from its cause, so it is refused where it is passed, naming
the class, the hook and what to use instead (the README's differences table
names the gap).
"""

from __future__ import annotations

import inspect

RAY_HOOKS = (
    "on_trial_add",
    "on_trial_result",
    "on_trial_complete",
    "on_trial_error",
    "on_trial_remove",
    "choose_trial_to_run",
)
RAY_CONTROLLER_NAMES = frozenset({"tune_controller", "trial_runner"})
"""The first parameter of every hook of Ray's scheduler API (2.x, 1.x)."""


def ray_style_hook(scheduler: object) -> str | None:
    """The first hook of `scheduler`'s class written with Ray's signature
    (its first parameter the controller), or None."""
    for hook in RAY_HOOKS:
        method = getattr(type(scheduler), hook, None)
        if not callable(method):
            continue
        try:
            parameters = list(inspect.signature(method).parameters)
        except (TypeError, ValueError):  # a builtin without a signature
            continue
        if len(parameters) > 1 and parameters[1] in RAY_CONTROLLER_NAMES:
            return hook
    return None


def refuse_ray_style_scheduler(scheduler: object) -> object:
    """Return `scheduler`, or raise `ValueError` if it is written against
    Ray's imperative API."""
    hook = ray_style_hook(scheduler)
    if hook is None:
        return scheduler
    name = type(scheduler).__qualname__
    raise ValueError(
        f"{name}.{hook}(self, tune_controller, ...) is Ray Tune's imperative scheduler API, "
        "which tunecore does not run: its schedulers are pure policies "
        "(tunecore.core.schedulers.base.TrialScheduler: hooks take the trial's state and "
        "return a new policy). Stop trials with a Stopper (RunConfig(stop=...)) or a "
        "built-in scheduler instead"
    )
