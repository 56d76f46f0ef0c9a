# mypy: ignore-errors
"""A callback reading Ray's `Trial` attributes as it hears of a trial's
end, the way users' callbacks keep the best checkpoint or log where a
failure went: `trial.checkpoint`, `trial.has_checkpoint()`,
`trial.experiment_dir_name`, `trial.local_experiment_path`,
`trial.node_ip`, `trial.error_file`. tunecore's `Trial` had none of them
(AttributeError in the callback, logged, so the callback saw nothing).
"""

import os
import tempfile

import tunecore as tune


def train(config):
    for step in range(1, 4):
        with tempfile.TemporaryDirectory() as directory:
            with open(os.path.join(directory, "step.txt"), "w") as f:
                f.write(str(step))
            tune.report({"step": step}, checkpoint=tune.Checkpoint.from_directory(directory))
        if config["fail"]:
            raise ValueError("this trial fails after its first report")


class TrialAttributes(tune.Callback):
    def __init__(self):
        self.seen = {}

    def _record(self, trial):
        checkpoint = trial.checkpoint
        step = None
        if checkpoint is not None:
            with checkpoint.as_directory() as directory:
                with open(os.path.join(directory, "step.txt")) as f:
                    step = int(f.read())
        self.seen[trial.config["fail"]] = {
            "step": step,
            "has_checkpoint": trial.has_checkpoint(),
            "experiment_dir_name": trial.experiment_dir_name,
            "local_experiment_path": trial.local_experiment_path,
            "node_ip": trial.node_ip,
            "error_file": trial.error_file,
        }

    def on_trial_complete(self, iteration, trials, trial, **info):
        self._record(trial)

    def on_trial_error(self, iteration, trials, trial, **info):
        self._record(trial)


attributes = TrialAttributes()
results = tune.Tuner(
    train,
    param_space={"fail": tune.grid_search([False, True])},
    run_config=tune.RunConfig(
        name="trial_attributes",
        storage_path=os.path.abspath("results"),
        callbacks=[attributes],
    ),
).fit()

done, failed = attributes.seen[False], attributes.seen[True]
assert done["step"] == 3, done
assert done["has_checkpoint"] is True
assert done["experiment_dir_name"] == "trial_attributes"
# Ray's is its staging copy of the experiment (`.../trial_attributes/driver_artifacts`
# in Ray's session directory); tunecore's, the experiment's directory itself
assert os.path.isdir(done["local_experiment_path"])
assert isinstance(done["node_ip"], str)
assert done["error_file"] is None
assert failed["step"] == 1, failed
assert failed["error_file"] is not None
assert os.path.basename(failed["error_file"]) == "error.txt"
with open(failed["error_file"]) as f:
    assert "this trial fails after its first report" in f.read()
