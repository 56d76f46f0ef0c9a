# mypy: ignore-errors
"""Trial artifacts written to the working directory.

Follows Ray Tune's output guide (doc/source/tune/tutorials/tune-output.md,
"How do you log arbitrary files from a Tune Trainable?"): a function
trainable writes `./artifact_{step}.txt` with a relative path, and "you
don't need to worry about multiple workers saving to the same location":
each trial runs in a working directory of its own (Ray's default,
`RAY_CHDIR_TO_TRIAL_DIR=1`: on tunecore the trial directory, on Ray 2.7+
a directory under Ray's session, see the README's differences). Then the FAQ's switch
(doc/source/tune/doc_code/faq.py, __no_chdir__): with
`RAY_CHDIR_TO_TRIAL_DIR=0` a trial runs in its worker's own directory
(the driver's, for a script that starts Ray itself; not written into
here, since under the test suite that is the suite's).
"""

import os

import tunecore as tune


def trainable(config):
    for step in range(3):
        with open(f"./artifact_{step}.txt", "w") as f:
            f.write(f"Artifact Data for trial {config['x']}")
        tune.report({"step": step, "cwd": os.getcwd()})


driver_dir = os.getcwd()
tuner = tune.Tuner(trainable, param_space={"x": tune.grid_search([1, 2])})
results = tuner.fit()

assert not results.errors
working_dirs = {result.metrics["cwd"] for result in results}
assert len(working_dirs) == 2  # a directory of its own per trial
assert driver_dir not in working_dirs
for result in results:
    for step in range(3):
        with open(os.path.join(result.metrics["cwd"], f"artifact_{step}.txt")) as f:
            assert f.read() == f"Artifact Data for trial {result.config['x']}"
assert not [name for name in os.listdir(driver_dir) if name.startswith("artifact_")]
assert os.getcwd() == driver_dir


def where_am_i(config):
    tune.report({"cwd": os.getcwd()})


os.environ["RAY_CHDIR_TO_TRIAL_DIR"] = "0"
(result,) = tune.Tuner(where_am_i).fit()
# The worker's own directory (the driver's, for a script that starts Ray).
assert result.metrics["cwd"] not in working_dirs
