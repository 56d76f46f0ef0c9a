"""The error a worker trainable raises when the user's code failed."""

from __future__ import annotations


class TrainableError(Exception):
    """The user's trainable failed; the message holds what went wrong and,
    when it raised, the formatted traceback from the thread it ran in.

    The traceback travels as text, not as the original exception object:
    the exception may not pickle (Ray ships errors from the actor to the
    driver) and the executor only needs the text for `TrialFailed.error`.
    The only constructor argument is the message, so it pickles as is."""
