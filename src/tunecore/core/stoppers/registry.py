"""The built-in stoppers' one table (see `tunecore.core.registry`): a new
stopper is its module plus one line here. `tunecore.shell.stoppers` tells
a built-in stopper (logged, in the core) from a user's own (run in the
driver) by it. The union a snapshot decodes, `SingleStopper`, is spelled
out in `combined` because `AnyOf` needs it as a field type when its class
is made; a test holds it to this table."""

from tunecore.core.registry import Entry, Registry
from tunecore.core.stoppers.combined import AnyOf
from tunecore.core.stoppers.iteration import MaximumIterationStopper
from tunecore.core.stoppers.noop import NoopStopper
from tunecore.core.stoppers.plateau import ExperimentPlateauStopper, TrialPlateauStopper
from tunecore.core.stoppers.timeout import TimeoutStopper

STOPPERS = Registry(
    "stopper",
    (
        Entry("maximum_iteration", MaximumIterationStopper, in_cli=False),
        Entry("trial_plateau", TrialPlateauStopper, in_cli=False),
        Entry("experiment_plateau", ExperimentPlateauStopper, in_cli=False),
        Entry("timeout", TimeoutStopper, in_cli=False),
        Entry("noop", NoopStopper, in_cli=False),
    ),
)
"""The single stoppers; `AnyOf` (`COMBINED`) combines them."""

COMBINED = AnyOf
"""The one built-in stopper that is not a single one: several combined."""
