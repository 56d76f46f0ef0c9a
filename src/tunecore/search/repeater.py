"""Ray Tune's `tune.search.repeater` module: `Repeater` and `TRIAL_INDEX`,
the config key that tells each repeat its index (to seed a noisy trainable).

`Repeater` is the core's struct (`tunecore.core.search.repeater`), generic
in the `SearchPolicy` it wraps; a type checker sees it declared here with
Ray's constructor, which takes a user's `Searcher` (`HyperOptSearch(...)`)
too, as `tunecore.search.concurrency_limiter` explains for the limiter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tunecore._not_provided import not_provided_getattr
from tunecore.core.search import TRIAL_INDEX, repeater

if TYPE_CHECKING:
    from tunecore.core.search import SearchPolicy
    from tunecore.search.searcher import Searcher

    class Repeater(repeater.Repeater[Any], frozen=True):
        """Wraps `searcher` so that each of its suggestions runs `repeat` times."""

        def __init__(
            self, searcher: Searcher | SearchPolicy, repeat: int = 1, set_index: bool = True
        ) -> None: ...

else:
    Repeater = repeater.Repeater

__all__ = ["TRIAL_INDEX", "Repeater"]

__getattr__ = not_provided_getattr(__name__)
