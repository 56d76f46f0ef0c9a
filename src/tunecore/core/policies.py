"""What the experiment reads alike from every policy, scheduler or searcher.

It lies below both policy packages (`core.schedulers`, `core.search`), so
neither imports the other for it.
"""

from __future__ import annotations


def policy_metric(policy: object) -> str | None:
    """The metric a scheduler or searcher reads, from its optional `metric`
    attribute (see `TrialScheduler`); None when it reads none."""
    metric = getattr(policy, "metric", None)
    return metric if isinstance(metric, str) else None
