"""Errors `Tuner.fit()` raises and results carry, under Ray Tune's names."""

from __future__ import annotations

import builtins
import re

from tunecore.shell.trainable.errors import failure_reason


class TuneError(RuntimeError):
    """The experiment failed as a whole: with `FailureConfig(fail_fast="raise")`,
    a trial's error. The experiment's directory and log are intact when it
    is raised (every worker ended, everything recorded kept), so
    `Tuner.restore` can continue it."""


class NoBestResultError(ValueError, RuntimeError):
    """No trial reported a number for the metric `get_best_result` ranks
    by. A ValueError, as tunecore's other refusals of that call are, and a
    RuntimeError, which is what Ray Tune raises there: a script written for
    Ray that catches it (`except RuntimeError`) goes on as it does on Ray."""


class TrialError(TuneError):
    """A failed trial's error, as `Result.error` and `ResultGrid.errors` give
    it: its message is the text error.txt holds (the traceback, for an
    exception). Ray Tune unpickles the exception the trial raised; nothing
    tunecore stores is a pickle, so where the trial raised one of Python's
    built-in exceptions this is an instance of that type too
    (`isinstance(result.error, ValueError)`), and otherwise of TuneError
    only, as Ray's is when the exception could not be pickled."""

    also: type[Exception] | None = None  # the built-in type it is too, if any

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[object, tuple[str | None, str]]:
        return _rebuilt, (None if self.also is None else self.also.__name__, str(self))


# The line a Python traceback ends with: `ValueError: bad x` or `KeyError`.
_RAISED = re.compile(r"^([A-Za-z_]\w*)(?::|$)")
_TRACEBACK = "Traceback (most recent call last):"


def trial_error(text: str, note: str = "") -> TrialError:
    """The `TrialError` for a trial's error text (see `TrialError`), its
    message the text and then `note`."""
    return _built(_builtin_raised(text), text + note)


def _built(raised: type[Exception] | None, message: str) -> TrialError:
    if raised is not None:
        try:
            return _as_also(raised)(message)
        except TypeError:  # a type that needs more than a message to build
            pass
    return TrialError(message)


def _rebuilt(raised_name: str | None, message: str) -> TrialError:
    """A pickled TrialError again (its class is made at run time)."""
    return _built(None if raised_name is None else _builtin_exception(raised_name), message)


def _builtin_raised(text: str) -> type[Exception] | None:
    """The built-in exception type a traceback in `text` ends with, if any."""
    if _TRACEBACK not in text:
        return None
    match = _RAISED.match(failure_reason(text))
    return _builtin_exception(match.group(1)) if match else None


def _builtin_exception(name: str) -> type[Exception] | None:
    """Python's built-in exception type called `name`, if there is one."""
    found = getattr(builtins, name, None)
    return found if isinstance(found, type) and issubclass(found, Exception) else None


_ALSO: dict[type[Exception], type[TrialError]] = {}  # one class per type


def _as_also(raised: type[Exception]) -> type[TrialError]:
    """A TrialError that is also a `raised`."""
    if raised not in _ALSO:
        try:
            _ALSO[raised] = type(
                f"TrialError[{raised.__name__}]", (TrialError, raised), {"also": raised}
            )
        except TypeError:  # its instance layout cannot be combined with TuneError's
            _ALSO[raised] = TrialError
    return _ALSO[raised]
