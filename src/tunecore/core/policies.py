"""What the experiment reads alike from every policy, scheduler or searcher.

It lies below both policy packages (`core.schedulers`, `core.search`), so
neither imports the other for it.
"""

from __future__ import annotations

from tunecore.core.results import DEFAULT_METRIC
from tunecore.model import JsonDict


def policy_metric(policy: object) -> str | None:
    """The metric a scheduler or searcher reads, from its optional `metric`
    attribute (see `TrialScheduler`); None when it reads none."""
    metric = getattr(policy, "metric", None)
    return metric if isinstance(metric, str) else None


def checked_metric(policy: object) -> str | None:
    """The metric strict metric checking holds every result to for this
    policy: its `metric`, but not Ray's anonymous `_metric` (which Ray's
    check passes over, so a policy acts only on results carrying it),
    unless the policy's optional `metric_required` attribute is true: a
    policy that cannot do without its metric in every result (Ray's own
    version fails the run on such a result: HyperBand's halving, PBT with
    `require_attrs`), so a result without it fails the trial, naming it,
    before the policy could act on a metric no result holds."""
    metric = policy_metric(policy)
    if metric == DEFAULT_METRIC and getattr(policy, "metric_required", False) is not True:
        return None
    return metric


def result_problem(policy: object, result: JsonDict) -> str | None:
    """Why `result` (flattened) fails its trial before the scheduler
    `policy` is asked about it: what its optional `result_problem` method
    says (PBT's `require_attrs`: a result without `time_attr` or the
    metric, on which Ray's PBT raises), or None."""
    check = getattr(policy, "result_problem", None)
    problem = None if check is None else check(result)
    return problem if isinstance(problem, str) else None
