# mypy: ignore-errors
"""`Trainable.cleanup` runs when a trial stops, also when its `step` raised.

Follows the `Trainable.cleanup` API docs (api/trainable.rst: "Subclasses
should override this for any cleanup on stop", e.g. to kill Ray actors or
close a logger the trainable started) and the fault-tolerance guide's
failing trial (tutorials/tune-fault-tolerance.md), with
`FailureConfig(max_failures=0)`: each instance records its cleanup.
"""

import os

import tunecore as tune

MARKERS = os.path.abspath("cleanup_markers")
os.makedirs(MARKERS, exist_ok=True)


class MyTrainable(tune.Trainable):
    def setup(self, config):
        self.steps = 0

    def step(self):
        self.steps += 1
        if self.config["fail"] and self.steps == 2:
            raise RuntimeError("step 2 fails")
        return {"steps": self.steps, "done": self.steps >= 3}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "steps"), "w") as f:
            f.write(str(self.steps))

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "steps")) as f:
            self.steps = int(f.read())

    def cleanup(self):
        with open(os.path.join(MARKERS, self.trial_id), "w") as f:
            f.write(str(self.steps))


tuner = tune.Tuner(
    MyTrainable,
    param_space={"fail": tune.grid_search([False, True])},
    run_config=tune.RunConfig(failure_config=tune.FailureConfig(max_failures=0)),
)
results = tuner.fit()
assert results.num_errors == 1 and results.num_terminated == 1
cleaned = {name: open(os.path.join(MARKERS, name)).read() for name in os.listdir(MARKERS)}
for result in results:
    trial_id = result.metrics["trial_id"]
    assert trial_id in cleaned, (trial_id, cleaned)
    assert cleaned[trial_id] == ("2" if result.config["fail"] else "3"), cleaned
