# mypy: ignore-errors
"""More of Ray Tune's module paths, as its docs, docstrings and examples
import from them: `ray.tune.tuner` (the trainable guide's reuse-actors
example), `ray.tune.tune` (`run_experiments`' docstring),
`ray.tune.experiment.trial` (the reporters guide), `ray.tune.progress_reporter`,
`ray.tune.error`, `ray.tune.context`, `ray.tune.syncer`,
`ray.tune.search.sample`, `ray.tune.registry.register_env` and
`ray.tune.utils.util.validate_warmstart` (the API reference). Each name is
used as a script would use it.
"""

import tunecore as tune
from tunecore.context import get_context
from tunecore.error import TuneError
from tunecore.experiment import Experiment, Trial
from tunecore.experiment.trial import Trial as TrialFromTrialModule
from tunecore.progress_reporter import CLIReporter, ProgressReporter
from tunecore.registry import register_env
from tunecore.search.sample import Domain
from tunecore.syncer import SyncConfig
from tunecore.tune import run, run_experiments
from tunecore.tuner import Tuner
from tunecore.utils.util import validate_warmstart

assert Trial is TrialFromTrialModule
assert issubclass(CLIReporter, ProgressReporter)
assert isinstance(tune.uniform(0, 1), Domain)
register_env("corridor", lambda env_config: env_config)
validate_warmstart(["a", "b"], [{"a": 1, "b": 2}], [0.5])


def trainable(config):
    tune.report({"score": config["x"], "trial_name": get_context().get_trial_name()})


class Names(tune.Callback):
    def __init__(self):
        self.started = []

    def on_trial_start(self, iteration, trials, trial, **info):
        assert isinstance(trial, Trial)
        self.started.append(str(trial))


names = Names()
results = Tuner(
    trainable,
    param_space={"x": tune.grid_search([1, 2])},
    run_config=tune.RunConfig(
        callbacks=[names], sync_config=SyncConfig(), progress_reporter=CLIReporter()
    ),
).fit()
assert sorted(r.metrics["trial_name"] for r in results) == sorted(names.started)

analysis = run(trainable, config={"x": 3})
assert analysis.trials[0].last_result["score"] == 3
trials = run_experiments(Experiment("from_tune_module", trainable, config={"x": 4}))
assert trials[0].last_result["score"] == 4


def fails(config):
    raise ValueError("bad")


try:
    run(fails)
    raised = None
except TuneError as error:
    raised = str(error)
assert raised is not None, "a failed trial raises TuneError"
assert "did not complete" in raised
