# mypy: ignore-errors
"""Reporters of one's own, as Ray Tune's reporters guide writes them.

Follows tune/api/reporters.rst ("Extending CLIReporter lets you control
reporting frequency": `ExperimentTerminationReporter`,
`TrialTerminationReporter`; "extending the ProgressReporter interface
directly": `CustomReporter`). Ray Tune 2.60 calls them under its old output
engine (`RAY_AIR_NEW_OUTPUT=0`, which `on_ray_tune.py` sets); what they
print is captured and checked.

Checked on Ray Tune 2.60 with tests/compat/on_ray_tune.py (ray[tune]
2.60.0, 2026-12-06): passes (344 s on a shared two-core machine).
"""

import contextlib
import io

import tunecore as tune
from tunecore import CLIReporter, ProgressReporter
from tunecore.experiment.trial import Trial


def my_trainable(config):
    for step in range(3):
        tune.report({"score": config["x"] * 10 + step})


def fit(reporter):
    """The guide's Tuner, with what it prints captured."""
    tuner = tune.Tuner(
        my_trainable,
        param_space={"x": tune.grid_search([1, 2, 3, 4])},
        run_config=tune.RunConfig(progress_reporter=reporter),
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        results = tuner.fit()
    assert not results.errors
    return results, out.getvalue()


class ExperimentTerminationReporter(CLIReporter):
    def should_report(self, trials, done=False):
        """Reports only on experiment termination."""
        return done


results, printed = fit(ExperimentTerminationReporter())
# One status, at the end: every trial listed as terminated.
assert printed.count("== Status ==") == 1, printed
final = printed[printed.index("== Status ==") :]
assert "Using FIFO scheduling algorithm." in final
assert final.count("TERMINATED") >= 4, final


class TrialTerminationReporter(CLIReporter):
    def __init__(self):
        super(TrialTerminationReporter, self).__init__()  # noqa: UP008 - as the guide writes it
        self.num_terminated = 0

    def should_report(self, trials, done=False):
        """Reports only on trial termination events."""
        old_num_terminated = self.num_terminated
        self.num_terminated = len([t for t in trials if t.status == Trial.TERMINATED])
        return self.num_terminated > old_num_terminated


reporter = TrialTerminationReporter()
results, printed = fit(reporter)
assert reporter.num_terminated == 4
# A status each time trials ended: at least once, at most once per trial.
assert 1 <= printed.count("== Status ==") <= 4, printed


class CustomReporter(ProgressReporter):
    def should_report(self, trials, done=False):
        return True

    def report(self, trials, *sys_info):
        print(*sys_info)
        print("\n".join([str(trial) for trial in trials]))


results, printed = fit(CustomReporter())
lines = printed.splitlines()
# The last report comes with done=True, then the scheduler's and the
# resources' status, then one line per trial, named as Ray names them.
last = max(i for i, line in enumerate(lines) if line.startswith("True Using FIFO"))
assert "Logical resource usage: " in lines[last]
names = lines[last + 1 : last + 5]
assert [name.rsplit("_", 1)[1] for name in names] == ["00000", "00001", "00002", "00003"], names
assert all(name.startswith("my_trainable_") for name in names), names
