"""The trial schedulers' one table (see `tunecore.core.registry`): a new
scheduler is its module plus one line here. The snapshot's union, Ray's
`create_scheduler`, `tunecore run --scheduler` and `tunecore simulate
--scheduler` all read it."""

from tunecore.core.registry import Entry, Registry
from tunecore.core.schedulers.asha import ASHAScheduler, ASHAStoredBeforeSplit
from tunecore.core.schedulers.asha_promotion import ASHAPromotionScheduler
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.schedulers.hb_bohb import HyperBandForBOHB
from tunecore.core.schedulers.hyperband import HyperBandScheduler
from tunecore.core.schedulers.imperative import ImperativeScheduler
from tunecore.core.schedulers.median import MedianStoppingRule
from tunecore.core.schedulers.pb2 import PB2
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.core.schedulers.pbt_replay import PopulationBasedTrainingReplay
from tunecore.core.schedulers.resource_changing import ResourceChangingScheduler
from tunecore.core.search.domains import SamplingDomain

_RUNGS = ("time_attr", "max_t", "grace_period", "reduction_factor", "brackets", "seed")
_POPULATION = ("time_attr", "perturbation_interval", "seed")

SCHEDULERS = Registry(
    "scheduler",
    (
        Entry("fifo", FIFOScheduler, ("fifo",), default=True, what_if=True),
        Entry(
            "asha",
            ASHAScheduler,
            ("async_hyperband", "asynchyperband"),
            settable=_RUNGS,
            what_if=True,
            stored_before=ASHAStoredBeforeSplit,
        ),
        Entry("asha_promotion", ASHAPromotionScheduler, settable=_RUNGS, in_cli=False),
        Entry(
            "hyperband",
            HyperBandScheduler,
            ("hyperband",),
            settable=("time_attr", "max_t", "reduction_factor"),
            what_if=True,
        ),
        Entry("hb_bohb", HyperBandForBOHB, ("hb_bohb",), in_cli=False),
        Entry(
            "median",
            MedianStoppingRule,
            ("median_stopping_rule", "medianstopping"),
            settable=("time_attr", "grace_period", "min_samples_required"),
            what_if=True,
        ),
        Entry(
            "pbt",
            PopulationBasedTraining,
            ("pbt",),
            stored_as=PopulationBasedTraining[SamplingDomain],
            settable=_POPULATION,
        ),
        Entry("pb2", PB2, ("pb2",), settable=_POPULATION),
        # Ray's constructor reads the policy file (the core reads no file):
        # `create_scheduler` builds through it, a snapshot stores the struct.
        Entry(
            "pbt_replay",
            "tunecore.schedulers.pbt_replay:PopulationBasedTrainingReplay",
            ("pbt_replay",),
            stored_as=PopulationBasedTrainingReplay,
            in_cli=False,
        ),
        # A scheduler object of the user's (Ray's imperative API) in the log.
        Entry("imperative", ImperativeScheduler, in_cli=False),
        Entry(
            "resource_changing",
            ResourceChangingScheduler,
            ("resource_changing",),
            in_cli=False,
            wraps=True,
        ),
    ),
)
