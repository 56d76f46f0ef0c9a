# mypy: ignore-errors
"""Replaying a PBT run's schedule with `PopulationBasedTrainingReplay`.

Follows Ray Tune's PBT guide and the `PopulationBasedTrainingReplay` API
page: a PBT run (`log_config=True`, the default) writes
`pbt_policy_<trial_id>.txt` into the experiment directory, and a second run
with `PopulationBasedTrainingReplay(policy_file)` trains one trial along
that schedule of configs, at a smoke-test size.

Checked on Ray Tune 2.60 with tests/compat/on_ray_tune.py (ray[tune]
2.60.0, Python 3.11, 2026-12-06): fails, because Ray's replayed trial
ends early. The PBT run passes; the replay changes the config once
("Population Based Training replay is now at step 2. Configuration will
be changed to {'lr': 0.2}"), the trial resumes from its step-2
checkpoint with the new config, reports iteration 3 and is then
TERMINATED, with no error and no `done`, 7 iterations short of the stop
criterion; the schedule's later change (at iteration 6) is never reached,
so the check that the trial reached iteration 10 fails (before that check
was added, `result.config == schedule[-1][5]` failed: 812 s, load 26).
Run again as it is now (204 s, load 8): the first change came at
iteration 4 ({'lr': 0.5}) and the trial ended at iteration 5, failing
`AssertionError: [1, 2, 3, 4, 5]`.
The same with a two-line policy file written by hand (changes at 2 and 4,
stop at 6), with `reuse_actors` True or False: iterations [1, 2, 3], lr
[0.3, 0.3, 0.2]. The cause, read in Ray 2.60's tune_controller.py: the
replay schedules a save, then `pause_trial(trial, should_checkpoint=False)`
calls `_schedule_trial_stop`, which, the trial still saving, caches a STOP
decision in `_cached_trial_decisions` and clears the save's future, so
nothing consumes it; the resumed trial's next checkpointing result keeps
that STOP (a CONTINUE does not overwrite it) and the save's completion
executes it. Ray's documentation says the replay trains the trial
along the whole schedule, which is what tunecore does (a deliberate
difference: tunecore does not end the trial after its first change).
"""

import json
import os
import tempfile

import ray

import tunecore as tune
from tunecore.schedulers import PopulationBasedTraining, PopulationBasedTrainingReplay


def train_fn(config):
    """Gains `lr` per step: the trials with a small lr clone the others."""
    step, score = 0, 0.0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            with open(os.path.join(checkpoint_dir, "state.json")) as f:
                state = json.load(f)
        step, score = state["step"], state["score"]
    while True:
        step += 1
        score += config["lr"]
        with tempfile.TemporaryDirectory() as tmpdir:
            with open(os.path.join(tmpdir, "state.json"), "w") as f:
                json.dump({"step": step, "score": score}, f)
            tune.report(
                {"score": score, "cur_lr": config["lr"]},
                checkpoint=tune.Checkpoint.from_directory(tmpdir),
            )


ray.init(num_cpus=2)

pbt = PopulationBasedTraining(
    time_attr="training_iteration",
    perturbation_interval=2,
    quantile_fraction=0.5,
    hyperparam_mutations={"lr": [0.1, 0.2, 0.3, 0.4, 0.5]},
)
results = tune.Tuner(
    train_fn,
    run_config=tune.RunConfig(name="pbt_test", stop={"training_iteration": 10}, verbose=0),
    tune_config=tune.TuneConfig(scheduler=pbt, metric="score", mode="max"),
    param_space={"lr": tune.grid_search([0.1, 0.2, 0.3, 0.4])},
).fit()
assert not results.errors

# The schedule of the trial exploited most often.
policy_files = [
    os.path.join(results.experiment_path, name)
    for name in os.listdir(results.experiment_path)
    if name.startswith("pbt_policy_")
]
assert policy_files, "PBT exploited no trial"
policy_file = max(policy_files, key=lambda path: len(open(path).readlines()))
with open(policy_file) as f:
    lines = [json.loads(line) for line in f]
# The schedule is the chain of exploits that led to the trial's state, read
# from the last line back while each line is the exploit of the previous
# line's donor (Ray's replay reads the file so).
schedule = [lines[-1]]
for line in reversed(lines[:-1]):
    if line[0] != schedule[0][1]:
        break
    schedule.insert(0, line)
print(f"Replaying {policy_file}: {len(schedule)} changes")

replay = PopulationBasedTrainingReplay(policy_file)
tuner = tune.Tuner(
    train_fn,
    run_config=tune.RunConfig(stop={"training_iteration": 10}, verbose=0),
    tune_config=tune.TuneConfig(scheduler=replay),
)
replayed = tuner.fit()

assert len(replayed) == 1
result = replayed[0]
assert result.error is None
# It started with the config the schedule starts from and took each new
# config in turn, ending with the last one.
history = result.metrics_dataframe
lrs_in_order = [
    lr for i, lr in enumerate(history["cur_lr"]) if i == 0 or lr != history["cur_lr"][i - 1]
]
expected = [schedule[0][4]["lr"]]
for line in schedule:
    if line[5]["lr"] != expected[-1]:
        expected.append(line[5]["lr"])
assert lrs_in_order[0] == expected[0]
assert set(lrs_in_order) <= set(expected), (lrs_in_order, expected)
# The trial trained to the stop criterion, through every change.
assert list(history["training_iteration"])[-1] == 10, list(history["training_iteration"])
assert result.config == schedule[-1][5]
