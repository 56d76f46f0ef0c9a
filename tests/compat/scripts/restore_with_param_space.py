# mypy: ignore-errors
"""Tune over object references, then restore with a new param_space.

Follows Ray Tune's "How to Enable Fault Tolerance in Ray Tune" guide,
doc/source/tune/doc_code/fault_tolerance.py (__ft_restore_objrefs_initial__,
__ft_restore_objrefs_restored__).

Checked on Ray Tune 2.60 with tests/compat/on_ray_tune.py (ray[tune]
2.60.0, 2026-12-06): passes (186 s on a shared two-core machine).
"""

import os

import ray

import tunecore as tune


class LargeModel:
    def __init__(self, model_id):
        self.model_id = model_id
        # Load weights based on the `model_id`...


def train_fn(config):
    # Retrieve the model from the object store.
    model = ray.get(config["model_ref"])
    tune.report({"model_id": model.model_id})


ray.init()

# These models may be large, so `ray.put` them in the Ray Object Store
# to share the models between trials.
model_refs = [ray.put(LargeModel(1)), ray.put(LargeModel(2))]

tuner = tune.Tuner(
    train_fn,
    # Tune over the object references!
    param_space={"model_ref": tune.grid_search(model_refs)},
    run_config=tune.RunConfig(storage_path="~/ray_results", name="restore_object_refs"),
)
results = tuner.fit()
assert not results.errors
assert sorted(r.metrics["model_id"] for r in results) == [1, 2]

# Re-create the objects and put them in the object store.
param_space = {"model_ref": tune.grid_search([ray.put(LargeModel(1)), ray.put(LargeModel(2))])}

tuner = tune.Tuner.restore(
    os.path.expanduser("~/ray_results/restore_object_refs"),
    trainable=train_fn,
    # Re-specify the `param_space` to update the object references.
    param_space=param_space,
    resume_errored=True,
)
results = tuner.fit()
assert not results.errors
assert len(results) == 2
assert sorted(r.metrics["model_id"] for r in results) == [1, 2]
