"""Reports a trial gets from outside its function's thread.

A training function may hand its training to work that runs elsewhere and
reports there: a Ray Train run, whose controller (another Ray actor) hears
every report of the run's workers (`tunecore.integration.ray_train`).
The function itself is meanwhile blocked in that work (`trainer.fit()`),
so it cannot report those results; a `Relay` does, from a thread of its
own, through `TrialSession.forward`, and the session serialises its
reports with the function's own, one handshake at a time.

What the session relies on, and so what a relay must do:

- `on_stop()` is called once the trial is asked to stop (from the
  driver's thread, so it must not block): it ends the outside work the
  function waits on, so the function can return. It returns True when
  that ending may make the function raise (`fit()` raising because its
  run was aborted), which the session then expects and does not warn of.
- `close()` is called in the function's thread once the function has
  returned or raised, before the session posts how the run ended. It
  returns only once the relay will report nothing more, having handed
  over every result that reached it before the function ended (unless the
  trial is stopping, when `forward` refuses them). An error it raises (a
  result the relay could not report) ends the run as an error of the
  function's would.
- Reports go through `TrialSession.forward` only, and none after `close`
  returned.
"""

from __future__ import annotations

from typing import Protocol


class Relay(Protocol):
    """Work outside a trial's function thread that reports for the trial
    (see the module doc for the rules)."""

    def on_stop(self) -> bool:
        """End the outside work, without blocking; True if the function may
        raise because of it."""
        ...

    def close(self) -> None:
        """Hand over what is left, then report nothing more."""
        ...
