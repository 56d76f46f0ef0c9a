# mypy: ignore-errors
# requires: xgboost
# timeout: 240
"""XGBoost with a `ResourceChangingScheduler`: Ray Tune's dynamic resources
example, shrunk to run here.

Follows python/ray/tune/examples/xgboost_dynamic_resources_example.py
(Ray 2.60) as written: ASHA wrapped in a `ResourceChangingScheduler` whose
`example_resources_allocation_function` divides the cluster's CPUs
(`tune_controller._resource_updater.get_num_cpus()`) among the live trials,
never below `scheduler._base_trial_resources`; the training function sets
`nthread` from `tune.get_context().get_trial_resources().head_cpus` and
checkpoints every iteration, so a resized trial restarts on a new actor
from its checkpoint. Shrunk: one trial instead of the grid's eight (on two
CPUs two trials would each keep one), 10 trees per round instead of 2000,
2 CPUs instead of 8. A callback records the CPUs the trial holds at each
result: it starts on 1 and, after its first result, holds the whole
cluster, as on Ray Tune.

Checked on Ray Tune 2.60 with tests/compat/on_ray_tune.py (ray[tune]
2.60.0, xgboost 3.2.0, scikit-learn 1.9.1, Python 3.11, 2026-12-06):
passes (248 s on a shared two-core machine, load 13-18).
"""

from typing import TYPE_CHECKING, Any

import ray
import sklearn.datasets
import sklearn.metrics
import xgboost as xgb
from sklearn.model_selection import train_test_split

import tunecore as tune
from tunecore.execution.placement_groups import PlacementGroupFactory
from tunecore.experiment import Trial
from tunecore.integration.xgboost import TuneReportCheckpointCallback
from tunecore.schedulers import ASHAScheduler, ResourceChangingScheduler

if TYPE_CHECKING:
    from tunecore.execution.tune_controller import TuneController

CHECKPOINT_FILENAME = "booster-checkpoint.json"


def get_best_model_checkpoint(best_result: "ray.tune.Result"):
    best_bst = TuneReportCheckpointCallback.get_model(
        best_result.checkpoint, filename=CHECKPOINT_FILENAME
    )

    accuracy = 1.0 - best_result.metrics["eval-logloss"]
    print(f"Best model parameters: {best_result.config}")
    print(f"Best model total accuracy: {accuracy:.4f}")
    return best_bst


# our train function needs to be able to checkpoint
# to work with ResourceChangingScheduler
def train_breast_cancer(config: dict):
    # This is a simple training function to be passed into Tune
    # Load dataset
    data, labels = sklearn.datasets.load_breast_cancer(return_X_y=True)
    # Split into train and test set
    train_x, test_x, train_y, test_y = train_test_split(data, labels, test_size=0.25)
    # Build input matrices for XGBoost
    train_set = xgb.DMatrix(train_x, label=train_y)
    test_set = xgb.DMatrix(test_x, label=test_y)

    # Checkpointing needs to be set up in order for dynamic
    # resource allocation to work as intended
    xgb_model = None
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        xgb_model = TuneReportCheckpointCallback.get_model(checkpoint, filename=CHECKPOINT_FILENAME)

    # Set `nthread` to the number of CPUs available to the trial,
    # which is assigned by the scheduler.
    config["nthread"] = int(tune.get_context().get_trial_resources().head_cpus)
    print(f"nthreads: {config['nthread']} xgb_model: {xgb_model}")
    # Train the classifier, using the Tune callback
    xgb.train(
        config,
        train_set,
        evals=[(test_set, "eval")],
        verbose_eval=False,
        xgb_model=xgb_model,
        callbacks=[
            TuneReportCheckpointCallback(
                # checkpointing should happen every iteration
                # with dynamic resource allocation
                frequency=1,
                filename=CHECKPOINT_FILENAME,
            )
        ],
    )


class HeldCpus(tune.Callback):
    """The CPUs the trial holds at each of its results."""

    def __init__(self):
        self.held = []

    def on_trial_result(self, iteration, trials, trial, result, **info):
        self.held.append(trial.placement_group_factory.head_cpus)


def tune_xgboost(held_cpus):
    search_space = {
        # You can mix constants with search space objects.
        "objective": "binary:logistic",
        "eval_metric": ["logloss", "error"],
        "max_depth": 9,
        "learning_rate": 1,
        "min_child_weight": 2,
        "subsample": 0.8,
        "colsample_bynode": 0.8,
        "random_state": 1,
        "num_parallel_tree": 10,
    }
    # This will enable aggressive early stopping of bad trials.
    base_scheduler = ASHAScheduler(
        max_t=16,
        grace_period=1,
        reduction_factor=2,  # 16 training iterations
    )

    def example_resources_allocation_function(
        tune_controller: "TuneController",
        trial: Trial,
        result: dict[str, Any],
        scheduler: "ResourceChangingScheduler",
    ) -> PlacementGroupFactory | None:
        """This is a basic example of a resource allocating function.

        The function naively balances available CPUs over live trials.
        """

        # Get base trial resources as defined in
        # ``tune.with_resources``
        base_trial_resource = scheduler._base_trial_resources

        # Don't bother if this is just the first iteration
        if result["training_iteration"] < 1:
            return None

        # default values if resources_per_trial is unspecified
        if base_trial_resource is None:
            base_trial_resource = PlacementGroupFactory([{"CPU": 1, "GPU": 0}])

        # Assume that the number of CPUs cannot go below what was
        # specified in ``Tuner.fit()``.
        min_cpu = base_trial_resource.required_resources.get("CPU", 0)

        # Get the number of CPUs available in total (not just free)
        total_available_cpus = tune_controller._resource_updater.get_num_cpus()

        # Divide the free CPUs among all live trials
        cpu_to_use = max(min_cpu, total_available_cpus // len(tune_controller.get_live_trials()))

        # Assign new CPUs to the trial in a PlacementGroupFactory
        return PlacementGroupFactory([{"CPU": cpu_to_use, "GPU": 0}])

    scheduler = ResourceChangingScheduler(
        base_scheduler=base_scheduler,
        resources_allocation_function=example_resources_allocation_function,
        # resources_allocation_function=DistributeResources()  # default
    )

    tuner = tune.Tuner(
        tune.with_resources(
            train_breast_cancer, resources=PlacementGroupFactory([{"CPU": 1, "GPU": 0}])
        ),
        tune_config=tune.TuneConfig(
            metric="eval-logloss",
            mode="min",
            num_samples=1,
            scheduler=scheduler,
        ),
        run_config=tune.RunConfig(callbacks=[held_cpus]),
        param_space=search_space,
    )
    results = tuner.fit()

    return results.get_best_result()


if __name__ == "__main__":
    ray.init(num_cpus=2)

    held_cpus = HeldCpus()
    best_result = tune_xgboost(held_cpus)
    best_bst = get_best_model_checkpoint(best_result)

    # You could now do further predictions with
    # best_bst.predict(...)
    assert held_cpus.held[0] == 1  # the first result, on the trial's base resources
    assert set(held_cpus.held[1:]) == {2}  # then the whole cluster, from its checkpoint
    assert best_result.metrics["training_iteration"] == len(held_cpus.held)
    # One round, paused and resized, then xgboost's 10 rounds on top of the
    # checkpointed booster (and the callback's checkpoint at the end).
    assert best_bst.num_boosted_rounds() == 11
