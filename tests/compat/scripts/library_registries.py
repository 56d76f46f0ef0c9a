# mypy: ignore-errors
# timeout: 240
# requires: fsspec
"""A library built on Ray Tune builds its searcher, scheduler and stopper
from config dicts, registering Ray's classes by name.

Follows SIAnalytics/siatune's `siatune/tune/{searchers,schedulers,stoppers}/
builder.py` and `tuner.py` (docs/ray-examples.md row 448): every searcher
through `tune.search.SEARCH_ALG_IMPORT`, the scheduler classes of
`tune.schedulers.SCHEDULER_IMPORT`, the stoppers found with
`dir(tune.stopper)`, a stopper of the library's own, and the optional lists
passed on as None (`RunConfig(callbacks=None, failure_config=None, ...)`).
A stopper from a package built on Ray Tune (rt-stoppers-contrib's classes
subclass `ray.tune.Stopper` itself: such a package is not the user's to
rewrite) stops trials beside them.
"""

import inspect
from collections import defaultdict

from ray.tune.stopper import Stopper as RayTuneStopper  # a package's base, not rewritten

import tunecore as tune


class Registry:
    """The part of mmengine's Registry the builders use."""

    def __init__(self):
        self.classes = {}

    def register(self, cls):
        self.classes[cls.__name__] = cls
        return cls

    def build(self, cfg):
        cfg = dict(cfg)
        return self.classes[cfg.pop("type")](**cfg)


SEARCHERS = Registry()
for cls in {func() for func in tune.search.SEARCH_ALG_IMPORT.values()}:
    SEARCHERS.register(cls)

TRIAL_SCHEDULERS = Registry()
for cls in set(tune.schedulers.SCHEDULER_IMPORT.values()):
    if not inspect.isclass(cls):
        continue
    TRIAL_SCHEDULERS.register(cls)

STOPPERS = Registry()
for name in dir(tune.stopper):
    if name.endswith("Stopper") and inspect.isclass(getattr(tune.stopper, name)):
        STOPPERS.register(getattr(tune.stopper, name))


@STOPPERS.register
class EarlyDroppingStopper(tune.Stopper):
    """Drop trials below a threshold after a grace period (siatune's)."""

    def __init__(self, metric, mode, metric_threshold, grace_period=0):
        self._metric = metric
        self._mode = mode
        self._metric_threshold = metric_threshold
        self._iter = defaultdict(lambda: 0)
        self._grace_period = grace_period

    def __call__(self, trial_id, result):
        self._iter[trial_id] += 1
        if self._iter[trial_id] < self._grace_period:
            return False
        value = result.get(self._metric)
        if self._mode == "min":
            return value > self._metric_threshold
        return value < self._metric_threshold

    def stop_all(self):
        return False


class PlateauFromAPackage(RayTuneStopper):
    """As rt-stoppers-contrib writes its stoppers: on Ray Tune's own class."""

    def __init__(self, metric, patience):
        self._metric = metric
        self._patience = patience
        self._best = {}
        self._stagnant = defaultdict(int)

    def __call__(self, trial_id, result):
        value = result[self._metric]
        if trial_id in self._best and value <= self._best[trial_id]:
            self._stagnant[trial_id] += 1
        else:
            self._best[trial_id], self._stagnant[trial_id] = value, 0
        return self._stagnant[trial_id] >= self._patience

    def stop_all(self):
        return False


searchers = {"BasicVariantGenerator", "HyperOptSearch", "OptunaSearch", "BayesOptSearch"}
assert searchers <= set(SEARCHERS.classes)
schedulers = {
    "FIFOScheduler",
    "MedianStoppingRule",
    "HyperBandScheduler",
    "PopulationBasedTraining",
}
assert schedulers <= set(TRIAL_SCHEDULERS.classes)
stoppers = {"MaximumIterationStopper", "CombinedStopper", "EarlyDroppingStopper"}
assert stoppers <= set(STOPPERS.classes)


def trainable(config):
    for step in range(8):
        # "low" trials stay under the threshold; the others plateau at `peak`
        tune.report({"acc": config["scale"] * min(step, config["peak"])})


searcher = SEARCHERS.build({"type": "BasicVariantGenerator", "max_concurrent": 2})
scheduler = TRIAL_SCHEDULERS.build({"type": "FIFOScheduler"})
stopper = tune.stopper.CombinedStopper(
    STOPPERS.build({"type": "MaximumIterationStopper", "max_iter": 7}),
    STOPPERS.build(
        {
            "type": "EarlyDroppingStopper",
            "metric": "acc",
            "mode": "max",
            "metric_threshold": 0.5,
            "grace_period": 2,
        }
    ),
    PlateauFromAPackage("acc", patience=2),
)
tuner = tune.Tuner(
    trainable,
    param_space={"scale": tune.grid_search([0.1, 1.0]), "peak": tune.grid_search([2, 5])},
    tune_config=tune.TuneConfig(search_alg=searcher, scheduler=scheduler, metric="acc", mode="max"),
    run_config=tune.RunConfig(
        name="library_registries",
        stop=stopper,
        callbacks=None,
        failure_config=None,
        sync_config=None,
        checkpoint_config=None,
    ),
)
results = tuner.fit()

assert not results.errors
steps = {(r.config["scale"], r.config["peak"]): r.metrics["training_iteration"] for r in results}
# scale 0.1 stays under 0.5: dropped at its grace period (the second result);
# scale 1.0 plateaus at `peak` and stops two results later, or at the cap of 7.
assert steps == {(0.1, 2): 2, (0.1, 5): 2, (1.0, 2): 5, (1.0, 5): 7}, steps
assert results.get_best_result().config == {"scale": 1.0, "peak": 5}
