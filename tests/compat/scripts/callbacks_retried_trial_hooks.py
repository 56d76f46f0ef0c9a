# mypy: ignore-errors
# timeout: 120
"""Every hook of a callback counted while a trial fails once and is retried
from its checkpoint, with a function and with a class trainable.

Follows python/ray/tune/tests/test_callbacks.py and the `Callback`
reference of Ray Tune 2.60 (python/ray/tune/callback.py) as a user writes
a callback: each hook counted, `max_failures=1`, a checkpoint each step.
Ray Tune 2.60 calls `on_trial_recover` when the trial fails, then
`on_trial_start` again as it restarts from its checkpoint; its controller
never calls `on_trial_restore` (tunecore did, once per retry). Its loop
calls `on_step_begin(iteration=n)` and `on_step_end(iteration=n + 1)` in
pairs, `n` counting the steps, every trial hook in between with the step's
`n`; how many steps a run takes depends on timing (on Ray a step waits at
most 0.1 s for one event), so the script checks their order, not their
number.
"""

import collections
import os
import tempfile

import tunecore as tune


class CountingCallback(tune.Callback):
    def __init__(self):
        self.counts = collections.Counter()
        self.step = None  # the step under way: its iteration, or None between steps
        self.steps_done = 0
        self.out_of_order = []  # (hook, iteration, the step under way) heard out of order

    def on_step_begin(self, iteration, trials, **info):
        self.counts["step_begin"] += 1
        if self.step is not None or iteration != self.steps_done:
            self.out_of_order.append(("step_begin", iteration, self.step))
        self.step = iteration

    def on_step_end(self, iteration, trials, **info):
        self.counts["step_end"] += 1
        if self.step is None or iteration != self.step + 1:
            self.out_of_order.append(("step_end", iteration, self.step))
        self.step = None
        self.steps_done = iteration

    def _trial_hook(self, name, iteration):
        self.counts[name] += 1
        if iteration != self.step:
            self.out_of_order.append((name, iteration, self.step))

    def on_trial_start(self, iteration, trials, trial, **info):
        self._trial_hook("trial_start", iteration)

    def on_trial_restore(self, iteration, trials, trial, **info):
        self._trial_hook("trial_restore", iteration)

    def on_trial_save(self, iteration, trials, trial, **info):
        self._trial_hook("trial_save", iteration)

    def on_trial_result(self, iteration, trials, trial, result, **info):
        self._trial_hook("trial_result", iteration)

    def on_trial_complete(self, iteration, trials, trial, **info):
        self._trial_hook("trial_complete", iteration)

    def on_trial_recover(self, iteration, trials, trial, **info):
        self._trial_hook("trial_recover", iteration)

    def on_trial_error(self, iteration, trials, trial, **info):
        self._trial_hook("trial_error", iteration)


def train(config):
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as d:
            start = int(open(os.path.join(d, "s")).read()) + 1
    for i in range(start, 3):
        with tempfile.TemporaryDirectory() as d:
            open(os.path.join(d, "s"), "w").write(str(i))
            tune.report({"x": i, "start": start}, checkpoint=tune.Checkpoint.from_directory(d))
        if config["fail"] and i == 1 and not os.path.exists(config["marker"]):
            open(config["marker"], "w").close()
            raise ValueError("once")


class Counter(tune.Trainable):
    def setup(self, config):
        self.i = 0
        self.start = 0

    def step(self):
        if self.config["fail"] and self.i == 2 and not os.path.exists(self.config["marker"]):
            open(self.config["marker"], "w").close()
            raise ValueError("once")
        self.i += 1
        return {"x": self.i, "start": self.start, "done": self.i >= 3}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "i"), "w") as f:
            f.write(str(self.i))

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "i")) as f:
            self.i = self.start = int(f.read())


for trainable, extra in [(train, {}), (Counter, {"checkpoint_freq": 1})]:
    name = getattr(trainable, "__name__", "trainable")
    cb = CountingCallback()
    analysis = tune.run(
        trainable,
        config={
            "fail": tune.grid_search([False, True]),
            "marker": os.path.abspath(f"marker_{name}"),
        },
        callbacks=[cb],
        max_failures=1,
        verbose=0,
        storage_path=os.path.abspath("results"),
        name=name,
        **extra,
    )
    counts = cb.counts
    print(name, dict(counts))
    assert [t.status for t in analysis.trials] == ["TERMINATED", "TERMINATED"]
    failed = next(t for t in analysis.trials if t.config["fail"])
    assert failed.last_result["start"] == 2, failed.last_result  # from its checkpoint
    assert counts["trial_recover"] == 1 and counts["trial_error"] == 0
    assert counts["trial_start"] == 3  # the retry starts the trial again
    assert counts["trial_restore"] == 0  # never called by Ray Tune 2.60
    assert counts["trial_complete"] == 2
    assert counts["trial_result"] == 6 and counts["trial_save"] == 6
    assert counts["step_begin"] == counts["step_end"] == cb.steps_done >= 1
    assert cb.step is None
    assert cb.out_of_order == [], cb.out_of_order[:5]
