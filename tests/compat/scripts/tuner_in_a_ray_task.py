# mypy: ignore-errors
# timeout: 180
# requires: hyperopt
"""A Tuner run inside a `@ray.remote` task that returns its ResultGrid,
with a Callback holding an actor handle and trials named after a closure.

Follows a user's Ray 2.x GROMACS tuner (a service starting
`run_tuning.remote(...)` and reading status from an actor), shrunk: a
closed-form performance instead of `mpirun gmx mdrun`, 4 samples, and
`tune.report`/`get_context()` for its `ray.air.session` calls. On Ray
Tune 2.60 the task returns the grid (pickled across), the actor hears
every trial complete, and the trials are named `trial_wrapper_...` (the
closure's `__name__`); tunecore's grid could not be unpickled (`Result is
read-only: cannot set '_best'`) and named them
`run_tuning.<locals>.trial_wrapper_...`.
"""

import os

import ray
from hyperopt import hp

import tunecore as tune
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.search.hyperopt import HyperOptSearch


@ray.remote
class TuneStatusActor:
    def __init__(self):
        self.trials = {}

    def update_trial(self, trial_id, status, performance=None):
        self.trials[trial_id] = (status, performance)

    def get_status(self):
        return self.trials


def gromacs_trial(config):
    choice = config["pme_choice"]
    performance = 10.0 * choice["np"] * choice["ntomp"]
    tune.report({"performance": performance, "id": tune.get_context().get_trial_id()})


@ray.remote
def run_tuning(job_id, status_actor, num_samples):
    space = {
        "pme_choice": hp.choice(
            "pme_choice",
            [
                {"pme": "gpu", "np": 1, "ntomp": hp.choice("gpu_ntomp", [1, 2, 4])},
                {"pme": "cpu", "np": hp.choice("np_count", [1, 2]), "ntomp": 1},
            ],
        )
    }

    def trial_wrapper(config):
        os.environ["OMP_NUM_THREADS"] = str(config["pme_choice"]["ntomp"])
        return gromacs_trial(config)

    class StatusReportingCallback(tune.Callback):
        def __init__(self, status_actor):
            self.status_actor = status_actor

        def on_trial_complete(self, iteration, trials, trial, **info):
            self.status_actor.update_trial.remote(
                trial.trial_id, "COMPLETED", trial.last_result.get("performance")
            )

    tuner = Tuner(
        trainable=trial_wrapper,
        tune_config=TuneConfig(
            search_alg=HyperOptSearch(space=space, metric="performance", mode="max"),
            num_samples=num_samples,
            metric="performance",
            mode="max",
            max_concurrent_trials=4,
        ),
        run_config=RunConfig(
            name=f"gromacs_tuning_{job_id}",
            callbacks=[StatusReportingCallback(status_actor)],
            verbose=0,
        ),
    )
    return tuner.fit()


ray.init()
actor = TuneStatusActor.remote()
results = ray.get(run_tuning.remote("job1", actor, num_samples=4))

assert len(results) == 4 and results.num_errors == 0
best = results.get_best_result()
assert best.metrics["performance"] == max(r.metrics["performance"] for r in results)
assert best.metrics["id"] == best.metrics["trial_id"]
assert len(best.metrics_dataframe) == 1  # read again from the trial's files
status = ray.get(actor.get_status.remote())
assert sorted(status) == sorted(r.metrics["trial_id"] for r in results)
assert {s for s, _ in status.values()} == {"COMPLETED"}
trial_dirs = sorted(os.path.basename(r.path) for r in results)
assert all(d.startswith("trial_wrapper_") for d in trial_dirs), trial_dirs
