"""A driver killed mid-run, as the tests of resume stage it: `Crash` is not
an Exception, so the loop's containment of callbacks' errors lets it
through, and it is raised at the end of a loop step, after the step's
commands were carried out (raising in the middle of one can leave a trial
the executor just started without a release)."""

from __future__ import annotations

from tunecore.shell.callbacks import Callback


class Crash(BaseException):
    """The driver dies here."""


class CrashAfterTrials(Callback):
    """Kills the driver at the end of the loop step in which the `trials`th
    trial completed."""

    def __init__(self, trials: int) -> None:
        self.left = trials

    def on_trial_complete(self, iteration: int, trials: object, trial: object) -> None:
        self.left -= 1

    def on_step_end(self, iteration: int, trials: object) -> None:
        if self.left <= 0:
            raise Crash
