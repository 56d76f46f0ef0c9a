# mypy: ignore-errors
"""A Trainable class that logs each result to a library of its own by
overriding `log_result`, and writes artifacts into its trial directory.

Follows "How do you log arbitrary files from a Tune Trainable?" (Class
API) in Ray Tune 2.60's doc/source/tune/tutorials/tune-output.md, made
runnable: `logging_library` is a JSON-lines file per trial in a directory
the driver names (Ray 2.60 runs a trial in a staging directory, not in
`Result.path`, so the artifacts are not checked), three steps. On Ray Tune
2.60 `log_result` is called with every result (Trainable.train); tunecore
never called it, so the file stayed empty, until 58e4c1e.
"""

import json
import os

import tunecore as tune

LOG_DIR = os.path.abspath("logging_library")
os.makedirs(LOG_DIR, exist_ok=True)


class CustomLogging(tune.Trainable):
    def setup(self, config):
        self.log_path = os.path.join(LOG_DIR, f"{self.trial_id}.jsonl")

    def step(self):
        with open(f"./artifact_{self.iteration}.txt", "w") as f:
            f.write("Artifact Data")
        return {"acc": self.iteration / 2, "done": self.iteration >= 2}

    def log_result(self, result):
        res_dict = {
            str(k): v
            for k, v in result.items()
            if (v and "config" not in k and not isinstance(v, str))
        }
        step = result["training_iteration"]
        with open(self.log_path, "a") as f:
            f.write(json.dumps({"step": step, "acc": res_dict.get("acc", 0)}) + "\n")


results = tune.Tuner(CustomLogging).fit()
(log_file,) = os.listdir(LOG_DIR)
logged = [json.loads(line) for line in open(os.path.join(LOG_DIR, log_file))]
assert [entry["step"] for entry in logged] == [1, 2, 3], logged
assert [entry["acc"] for entry in logged] == [0, 0.5, 1.0], logged
