# mypy: ignore-errors
# timeout: 180
"""Trial resources that depend on the config, and placement-group bundles.

Follows Ray Tune's "A Guide To Parallelism and Resources for Ray Tune"
(tutorials/tune-resources.md): `tune.with_resources(trainable,
resources=lambda config: {"GPU": 1} if config["use_gpu"] else {"GPU": 0})`
(here CPUs, the machine has no GPU), `tune.PlacementGroupFactory([{"CPU":
1}, {"CPU": 1}])` for a trainable that starts remote tasks of its own, and
`tune.get_context().get_trial_resources()` inside the trial.
"""

import ray

import tunecore as tune


def train_fn(config):
    resources = tune.get_context().get_trial_resources()
    tune.report(
        {
            "cpus": resources.required_resources.get("CPU", 0),
            "bundles": len(resources.bundles),
        }
    )


tuner = tune.Tuner(
    tune.with_resources(
        train_fn,
        resources=lambda config: {"CPU": 2} if config["big"] else {"CPU": 1},
    ),
    param_space={"big": tune.grid_search([True, False])},
)
results = tuner.fit()
assert not results.errors, results.errors
by_big = {r.config["big"]: r.metrics for r in results}
assert by_big[True]["cpus"] == 2 and by_big[False]["cpus"] == 1, by_big


@ray.remote(num_cpus=1)
def square(x):
    return x * x


def train_with_tasks(config):
    # The second bundle is for the task this trial starts.
    value = ray.get(square.remote(config["x"]))
    resources = tune.get_context().get_trial_resources()
    tune.report({"value": value, "bundles": len(resources.bundles)})


tuner = tune.Tuner(
    tune.with_resources(
        train_with_tasks,
        resources=tune.PlacementGroupFactory([{"CPU": 1}, {"CPU": 1}]),
    ),
    param_space={"x": tune.grid_search([3, 4])},
)
results = tuner.fit()
assert not results.errors, results.errors
assert sorted(r.metrics["value"] for r in results) == [9, 16]
assert all(r.metrics["bundles"] == 2 for r in results)
