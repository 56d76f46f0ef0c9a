# mypy: ignore-errors
"""`tune.run(resume=...)` with the forms Ray Tune 2.60 deprecated, after a
run with an errored trial, then the forms it takes.

Follows python/ray/tune/tests/test_tune_restore.py's resume tests as a user
writes them, and `tune.run`'s docstring in Ray 2.60 (resume: True, False,
"AUTO", optionally suffixed "+ERRORED", "+ERRORED_ONLY", "+RESTART_ERRORED",
"+RESTART_ERRORED_ONLY"). "ERRORED_ONLY", "LOCAL", "REMOTE" and "PROMPT" as
the first part raise `DeprecationWarning` (an exception raised, not a
warning issued): "'ERRORED_ONLY' is deprecated. Please pass in one of
(True, False, 'AUTO')."; nothing runs. tunecore raised a ValueError.
"""

import os
import tempfile

import tunecore as tune


def train(config):
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as d:
            start = int(open(os.path.join(d, "it")).read()) + 1
    for i in range(start, 3):
        with tempfile.TemporaryDirectory() as d:
            open(os.path.join(d, "it"), "w").write(str(i))
            tune.report({"it": i, "start": start}, checkpoint=tune.Checkpoint.from_directory(d))
        if config["fail"] and i == 1 and os.path.exists(config["flag"]):
            raise RuntimeError("failing on purpose")


flag = os.path.abspath("fail_flag")
open(flag, "w").close()
kwargs = {
    "config": {"fail": tune.grid_search([False, True]), "flag": flag},
    "name": "resume_exp",
    "storage_path": os.path.abspath("results"),
    "verbose": 0,
}
first = tune.run(train, raise_on_failed_trial=False, **kwargs)
assert sorted(t.status for t in first.trials) == ["ERROR", "TERMINATED"]
os.remove(flag)


refused = {}
for resume in ["ERRORED_ONLY", "LOCAL", "REMOTE+ERRORED", "PROMPT"]:
    try:
        tune.run(train, resume=resume, **kwargs)
    except DeprecationWarning as warning:
        refused[resume] = str(warning)
print(refused)
assert len(refused) == 4, refused
for resume, text in refused.items():
    deprecated = resume.split("+", maxsplit=1)[0]
    assert f"'{deprecated}' is deprecated. Please pass in one of (True, False, 'AUTO')." in text

again = tune.run(train, resume="AUTO+ERRORED_ONLY", **kwargs)
failed = next(t for t in again.trials if t.config["fail"])
assert failed.status == "TERMINATED", failed.status
assert failed.last_result["start"] == 2, failed.last_result
