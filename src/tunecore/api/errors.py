"""Errors `Tuner.fit()` raises, under Ray Tune's name."""

from __future__ import annotations


class TuneError(RuntimeError):
    """The experiment failed as a whole: with `FailureConfig(fail_fast="raise")`,
    a trial's error. The experiment's directory and log are intact when it
    is raised (every worker ended, everything recorded kept), so
    `Tuner.restore` can continue it."""
