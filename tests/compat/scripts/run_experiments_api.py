# mypy: ignore-errors
"""`Experiment` and `run_experiments`, and `tune.run(restore=...)`.

Follows Ray Tune's `run_experiments` reference (tune/api/execution.rst,
"tune.run_experiments": `run_experiments`, `Experiment`) and the example
in its docstring (python/ray/tune/tune.py: an `Experiment` or a dict of
specs, with `from ray.tune.tune import run_experiments`), then `tune.run`'s
`restore` argument ("Path to checkpoint"), and `tune.register_env`, which
RLlib scripts call before they tune.
"""

import os
import tempfile

import tunecore as tune
from tunecore.experiment import Experiment
from tunecore.tune import run_experiments


def my_func(config):
    return {"score": config.get("x", 0) * 2}


experiment_spec = Experiment("experiment", my_func, config={"x": tune.grid_search([1, 2])})
trials = run_experiments(experiments=experiment_spec)
assert sorted(trial.last_result["score"] for trial in trials) == [2, 4]
assert all(trial.status == "TERMINATED" for trial in trials)

experiment_spec = {"experiment": {"run": my_func}}
trials = run_experiments(experiments=experiment_spec)
assert [trial.last_result["score"] for trial in trials] == [0]


def train_steps(config):
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "step.txt")) as f:
                start = int(f.read()) + 1
    for step in range(start, config["steps"]):
        with tempfile.TemporaryDirectory() as temp_dir:
            with open(os.path.join(temp_dir, "step.txt"), "w") as f:
                f.write(str(step))
            tune.report(
                {"step": step, "started_at": start},
                checkpoint=tune.Checkpoint.from_directory(temp_dir),
            )


first = tune.run(train_steps, config={"steps": 3}, metric="step", mode="max")
checkpoint = first.best_checkpoint
assert checkpoint is not None

# Every trial of the second run starts from that checkpoint (step 2).
second = tune.run(
    train_steps,
    config={"steps": 5, "x": tune.grid_search([1, 2])},
    restore=checkpoint.path,
)
assert [trial.last_result["started_at"] for trial in second.trials] == [3, 3]
assert [trial.last_result["step"] for trial in second.trials] == [4, 4]


class MyEnv:
    def __init__(self, env_config):
        self.size = env_config.get("size", 1)


tune.register_env("my_env", lambda env_config: MyEnv(env_config))  # noqa: PLW0108 - as RLlib writes it
