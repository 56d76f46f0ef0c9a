# mypy: ignore-errors
"""fail_fast="raise": the first trial error is raised from fit().

Follows Ray Tune's FailureConfig reference (tune/api/doc/ray.tune.FailureConfig:
"If fail_fast='raise' provided, the original error raised by the trainable
will be re-raised") and doc/source/tune/doc_code/stopping.py
(__stopping_on_trial_error__).
"""

import tunecore as tune


def my_failing_trainable(config):
    if config["should_fail"]:
        raise RuntimeError("Failing (on purpose)!")
    tune.report({"mean_accuracy": 0.9})


tuner = tune.Tuner(
    my_failing_trainable,
    param_space={"should_fail": True},
    run_config=tune.RunConfig(failure_config=tune.FailureConfig(fail_fast="raise")),
)
try:
    tuner.fit()
except Exception as error:  # whichever wrapper carries it
    message = str(error)
else:
    message = "fit() returned; fail_fast='raise' should raise the trial's error"
assert "Failing (on purpose)!" in message, message
