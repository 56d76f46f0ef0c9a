"""When a searcher object that suggested no trial is asked again.

A searcher object answers an ask with a config, `Searcher.FINISHED`
(never again) or None: nothing now. While trials run, tunecore asks it
again after its next tell (a result, a trial's end: what could change its
answer). With nothing running nothing more will be told, and Ray Tune 2.60
keeps asking: `TuneController._update_trial_queue(blocking=True)` calls
`suggest` about once a second until a trial comes or the searcher says
FINISHED, for 600 s, then takes one loop step (the progress output, a
stopper's `stop_all`) and blocks again, so a searcher that always answers
None holds the run forever, silently. A searcher's state may move on each
ask even with nothing told (`BayesOptSearch` counts a GP suggestion it
skips as a duplicate and says FINISHED once one repeats more than
`patience` times), which is why being asked again matters.

tunecore asks again on Ray's pace at first, then less and less often, and
gives up after `GIVE_UP_AFTER` asks in a row (about ten minutes, Ray's
own blocking timeout) with the dead end's error: a user learns that the
searcher is stuck, with the results so far, where Ray would wait without a
word. Each ask is in the log (an `Asked`, and the `Tick` that made it
due), so the log grows by about 50 events at most, and replay and a
resume make the same asks (`next_ask_at` reads only logged times). A
resume counts afresh: it asks again at once.
"""

from __future__ import annotations

import msgspec

FIRST_ASKS = 10
"""Asks made a second apart, as Ray makes them (enough for BayesOpt's
default `patience` of 5)."""

RETRY_S = 1.0
"""Ray's pause between two asks of a blocked `_update_trial_queue`."""

MAX_DELAY_S = 60.0
"""The longest pause between two asks, once they have slowed down."""

GIVE_UP_AFTER = 25
"""Declines in a row after which the searcher is not asked again: the
first ask, then 10 a second apart, 5 after pauses doubling from 2 s to
32 s and 9 a minute apart, about 612 s in all."""


class Declined(msgspec.Struct, frozen=True, kw_only=True):
    """A searcher that suggested no trial at its last ask and was told
    nothing since: `times` asks in a row, the first at `since`, the last
    at `last`; `again_at`: when it may be asked again, None when it will
    not be (given up, or a searcher from a log written before tunecore
    asked again)."""

    times: int
    since: float
    last: float
    again_at: float | None


def next_ask_at(times: int, last: float) -> float | None:
    """When a searcher that declined `times` asks in a row, the last at
    `last`, is asked again; None after `GIVE_UP_AFTER`."""
    if times >= GIVE_UP_AFTER:
        return None
    slowed = times - FIRST_ASKS
    delay = RETRY_S if slowed < 1 else min(MAX_DELAY_S, RETRY_S * 2.0**slowed)
    return last + delay


def gave_up_message(declined: Declined | None) -> str:
    """The dead end's error when nothing runs and the searcher suggests no
    trial (`declined`: its asks, where it was asked again)."""
    asked = ""
    if declined is not None and declined.times > 1:
        seconds = declined.last - declined.since
        asked = f" (asked {declined.times} times in a row over {seconds:.0f} s)"
    return (
        f"The searcher suggested no trial while none is running or waiting{asked}, "
        "so the experiment cannot go on."
    )
