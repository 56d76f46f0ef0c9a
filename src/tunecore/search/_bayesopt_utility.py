"""Ray's `utility_kwargs` for BayesOptSearch, checked, as a bayes_opt 3.x acquisition.

bayes_opt 2.x and 3.x replaced 1.x's `UtilityFunction`, which Ray's
`utility_kwargs` describe, with acquisition objects: `{"kind": "ucb",
"kappa": k}` becomes `UpperConfidenceBound(kappa=k)`, `"ei"` and `"poi"`
become `ExpectedImprovement(xi=xi)` and `ProbabilityOfImprovement(xi=xi)`,
and 1.x's `kappa_decay`/`kappa_decay_delay` become UCB's
`exploration_decay`/`exploration_decay_delay`.

bayes_opt 1.x itself has no acquisition objects, and it is the version a Ray
Tune 2.60 environment holds (Ray's BayesOptSearch calls `UtilityFunction`):
`require_acquisition_api` refuses it when the searcher is built, naming the
version found, where it would otherwise fail the experiment at the first
suggestion.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from tunecore.model import InvalidFieldError
from tunecore.model.numbers import is_int
from tunecore.search.spaces import finite

if TYPE_CHECKING:
    from bayes_opt.acquisition import AcquisitionFunction


class Utility(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """bayes_opt 1.x's `UtilityFunction` arguments (Ray's `utility_kwargs`),
    with Ray's defaults."""

    kind: Literal["ucb", "ei", "poi"] = "ucb"
    kappa: float = 2.576
    xi: float = 0.0
    kappa_decay: float = 1.0
    kappa_decay_delay: int = 0


def checked_utility(given: dict[str, Any] | None) -> Utility:
    """bayes_opt 1.x's `UtilityFunction` arguments, checked, with defaults."""
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        raise InvalidFieldError("BayesOptSearch.utility_kwargs", given, "a dict")
    fields = Utility.__struct_fields__
    for key in given:
        if key not in fields:
            raise InvalidFieldError(
                f"BayesOptSearch.utility_kwargs[{key!r}]",
                given[key],
                f"one of the keys {sorted(fields)}",
            )
    utility = {**msgspec.structs.asdict(Utility()), **given}
    if utility["kind"] not in ("ucb", "ei", "poi"):
        raise InvalidFieldError(
            "BayesOptSearch.utility_kwargs['kind']", utility["kind"], "'ucb', 'ei' or 'poi'"
        )
    for key in ("kappa", "xi"):
        if finite(utility[key]) is None or utility[key] < 0:
            raise InvalidFieldError(
                f"BayesOptSearch.utility_kwargs[{key!r}]", utility[key], "a number >= 0"
            )
    decay = finite(utility["kappa_decay"])
    if decay is None or not 0 < decay <= 1:
        raise InvalidFieldError(
            "BayesOptSearch.utility_kwargs['kappa_decay']",
            utility["kappa_decay"],
            "a number in (0, 1]",
        )
    delay = utility["kappa_decay_delay"]
    if not is_int(delay) or delay < 0:
        raise InvalidFieldError(
            "BayesOptSearch.utility_kwargs['kappa_decay_delay']", delay, "an integer >= 0"
        )
    return msgspec.convert(utility, Utility)


def require_acquisition_api() -> None:
    """An ImportError naming the installed bayesian-optimization and the
    extra to install, when its bayes_opt has no `acquisition` module (1.x)."""
    try:
        importlib.import_module("bayes_opt.acquisition")
    except ImportError as error:
        try:
            found = importlib.metadata.version("bayesian-optimization")
        except importlib.metadata.PackageNotFoundError:
            found = "a version without it"
        raise ImportError(
            "BayesOptSearch needs bayesian-optimization 3 (its bayes_opt.acquisition); found "
            f"{found}: 1.x, the version Ray Tune 2.60's BayesOptSearch drives, has no "
            "acquisition objects. pip install 'tunecore[bayesopt]'"
        ) from error


def acquisition_function(utility: Utility) -> AcquisitionFunction:
    """The bayes_opt 3.x acquisition function for 1.x's utility arguments."""
    from bayes_opt import acquisition  # noqa: PLC0415 - optional package

    if utility.kind == "ucb":
        decays = utility.kappa_decay < 1
        return acquisition.UpperConfidenceBound(
            kappa=utility.kappa,
            exploration_decay=utility.kappa_decay if decays else None,
            exploration_decay_delay=utility.kappa_decay_delay if decays else None,
        )
    if utility.kind == "ei":
        return acquisition.ExpectedImprovement(xi=utility.xi)
    return acquisition.ProbabilityOfImprovement(xi=utility.xi)


__all__ = ["Utility", "acquisition_function", "checked_utility", "require_acquisition_api"]
