# mypy: ignore-errors
"""The trial's context in a function trainable, and relative file paths.

Follows Ray Tune's FAQ (faq.md: "How do I access relative filepaths in my
Tune training function?", `RAY_CHDIR_TO_TRIAL_DIR=0`,
`tune.get_context().get_trial_dir()`) and the `TuneContext` API
(`get_trial_name`, `get_trial_id`, `get_experiment_name`,
`get_trial_resources`, `get_trial_dir`), with `trial_dirname_creator` and
`trial_name_creator` as tune-output's FAQ entry names trials.
"""

import os

os.environ["RAY_CHDIR_TO_TRIAL_DIR"] = "0"

import tunecore as tune

os.makedirs("data", exist_ok=True)
with open("data/input.txt", "w") as f:
    f.write("42")
# Read by absolute path: a worker of a Ray cluster started elsewhere (as
# the compat suite's) does not start in this directory.
DATA = os.path.abspath("data/input.txt")


def train_func(config):
    ctx = tune.get_context()
    with open(DATA) as f:
        value = int(f.read())
    # Write to the trial directory.
    trial_dir = ctx.get_trial_dir()
    with open(os.path.join(trial_dir, "artifact.txt"), "w") as f:
        f.write(ctx.get_trial_name())
    tune.report(
        {
            "value": value + config["x"],
            "cwd": os.getcwd(),
            "trial_name": ctx.get_trial_name(),
            "trial_id": ctx.get_trial_id(),
            "experiment_name": ctx.get_experiment_name(),
            "cpus": ctx.get_trial_resources().required_resources.get("CPU"),
            "trial_dir": trial_dir,
        }
    )


def trial_str_creator(trial):
    return f"{trial.trainable_name}_{trial.trial_id}_x{trial.config['x']}"


tuner = tune.Tuner(
    tune.with_resources(train_func, {"cpu": 1}),
    param_space={"x": tune.grid_search([1, 2])},
    tune_config=tune.TuneConfig(
        trial_name_creator=trial_str_creator,
        trial_dirname_creator=lambda trial: f"dir_{trial.trial_id}",
    ),
    run_config=tune.RunConfig(name="ctx_exp", storage_path=os.path.abspath("results")),
)
results = tuner.fit()
assert not results.errors, results.errors
for result in results:
    m = result.metrics
    assert m["value"] == 42 + result.config["x"]
    # Not moved into the trial directory.
    assert os.path.realpath(m["cwd"]) != os.path.realpath(m["trial_dir"]), m["cwd"]
    assert m["trial_name"].endswith(f"_x{result.config['x']}"), m["trial_name"]
    assert m["trial_id"] in m["trial_name"], m["trial_name"]
    assert m["experiment_name"] == "ctx_exp"
    assert m["cpus"] == 1
    assert os.path.basename(result.path) == f"dir_{m['trial_id']}", result.path
    # The trial's working directory: Result.path on tunecore, under the
    # Ray session on Ray 2.60 (docs/differences.md); the artifact is there.
    assert os.path.basename(m["trial_dir"]) == f"dir_{m['trial_id']}", m["trial_dir"]
    with open(os.path.join(m["trial_dir"], "artifact.txt")) as f:
        assert f.read() == m["trial_name"]
