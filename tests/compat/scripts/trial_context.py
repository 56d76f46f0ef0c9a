# mypy: ignore-errors
"""Inside a trial: its context, and files written to its directory.

Follows Ray Tune's FAQ (doc/source/tune/doc_code/faq.py, __no_chdir__:
"Write to the Tune trial directory" with get_context().get_trial_dir())
and the TuneContext reference (tune/api/doc/ray.tune.TuneContext).
"""

import os
from pathlib import Path

import tunecore as tune


def train_func(config):
    context = tune.get_context()
    assert isinstance(context, tune.TuneContext), type(context)
    # Write to the Tune trial directory, not the shared working dir
    tune_trial_dir = Path(context.get_trial_dir())
    with open(tune_trial_dir / "write.txt", "w") as f:
        f.write("trial saved artifact")
    tune.report(
        {
            "trial_id": context.get_trial_id(),
            "trial_name": context.get_trial_name(),
            "experiment_name": context.get_experiment_name(),
        }
    )


tuner = tune.Tuner(
    train_func,
    param_space={"x": tune.grid_search([1, 2])},
    run_config=tune.RunConfig(name="context_example"),
)
results = tuner.fit()

assert not results.errors
assert len({r.metrics["trial_id"] for r in results}) == 2
for result in results:
    with open(os.path.join(result.path, "write.txt")) as f:
        assert f.read() == "trial saved artifact"
    assert result.metrics["experiment_name"] == "context_example"
    assert result.metrics["trial_id"] == result.metrics["trial_id"].strip()
    assert result.metrics["trial_id"] in result.metrics["trial_name"]
