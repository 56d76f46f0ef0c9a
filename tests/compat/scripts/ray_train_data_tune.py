# mypy: ignore-errors
# requires: torch
# timeout: 1500
"""Ray Train's "Data Loading and Preprocessing" guide of Ray 2.60
(doc/source/train/doc_code/data_ingest_torch_new.py: the `__basic__`,
`__materialized__`, `__custom_split__`, `__options__` and `__custom__`
blocks) run inside the Tune sweep of Ray Train's "Hyperparameter Tuning
with Ray Tune" guide (train_tune_interop.py: a function trainable
launching the Train run with `TuneReportCallback()`), Tune choosing the
ingest config the Train run gets: the default `DataConfig` with the
guide's execution options, or its `MyCustomDataConfig`.

ONLY the imports are rewritten: `from ray import train` -> `import tunecore
as train`, `from ray.train import X` -> `from tunecore import X`,
`from ray.train.torch import` -> `from tunecore.torch import`, `import
ray.train`/`ray.tune` -> `import tunecore`, and `ray.train.X` /
`ray.tune.X` in code -> `tunecore.X`. So `train.get_dataset_shard`,
`DataConfig` (subclassed by the guide) and `TorchTrainer` are Ray Train's,
and `ScalingConfig`/`RunConfig` are tunecore's, converted for the trainer.

Shrunk for a 2-CPU machine: the guide's S3 iris parquet is 30 rows of the
same columns made with `ray.data.from_items`; 1 Train worker, one trial at
a time; the data is materialized in the Train driver (the guide's
`__materialized__` block) before the Train worker takes the second CPU, so
no Ray Data task waits for a CPU during training; 2 epochs of batches of
8. The guide's `__options__` line setting a read-only property (an
AttributeError on Ray 2.60) sets the same limit through `copy`. The
assertions hold on Ray Tune 2.60 as on tunecore.
"""

# flake8: noqa
# isort: skip_file

import os

os.environ["RAY_TRAIN_V2_ENABLED"] = "1"

# __basic__
import ray
import tunecore as train
from tunecore import ScalingConfig
from tunecore.torch import TorchTrainer

import numpy as np
from typing import Dict

import tunecore
from tunecore.integration.ray_train import TuneReportCallback

TRAIN_STORAGE = os.path.abspath("train_results")  # the Ray workers share this machine


def read_iris():
    # Stands in for ray.data.read_parquet("s3://anonymous@ray-example-data/iris.parquet").
    return ray.data.from_items(
        [
            {"sepal.length": 4.3 + 0.1 * i, "sepal.width": 3.0, "variety": "Setosa"}
            for i in range(30)
        ]
    )


# Define a preprocessing function.
def normalize_length(batch: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    new_col = batch["sepal.length"] / np.max(batch["sepal.length"])
    batch["normalized.sepal.length"] = new_col
    del batch["sepal.length"]
    return batch


def train_loop_per_worker(config):
    # Get an iterator to the dataset we passed in below.
    it = train.get_dataset_shard("train")

    rows = 0
    for _ in range(config["epochs"]):
        for batch in it.iter_batches(
            local_shuffle_buffer_size=10, batch_size=config["batch_size"], prefetch_batches=1
        ):
            assert "sepal.length" not in batch, list(batch)
            rows += len(batch["normalized.sepal.length"])
    train.report({"rows": rows, "max_length": float(np.max(batch["normalized.sepal.length"]))})


# __basic_end__


# __custom__
# Note that this example class is doing the same thing as the basic DataConfig
# impl included with Ray Train.
from typing import Optional, Dict, List

from ray.data import Dataset, DataIterator, NodeIdStr
from ray.actor import ActorHandle
from tunecore import DataConfig


class MyCustomDataConfig(DataConfig):
    def configure(
        self,
        datasets: Dict[str, Dataset],
        world_size: int,
        worker_handles: Optional[List[ActorHandle]],
        worker_node_ids: Optional[List[NodeIdStr]],
        **kwargs,
    ) -> List[Dict[str, DataIterator]]:
        assert len(datasets) == 1, "This example only handles the simple case"

        # Configure Ray Data for ingest.
        ctx = ray.data.DataContext.get_current()
        ctx.execution_options = DataConfig.default_ingest_options()

        # Split the stream into shards.
        iterator_shards = datasets["train"].streaming_split(
            world_size, equal=True, locality_hints=worker_node_ids
        )

        # Return the assigned iterators for each worker.
        return [{"train": it} for it in iterator_shards]


# __custom_end__


def train_driver_fn(config: dict):
    # __materialized__
    # Preprocess the data. Transformations that are made to the materialize call below
    # will only be run once.
    train_ds = read_iris().map_batches(normalize_length)

    # Materialize the dataset in object store memory.
    train_ds = train_ds.materialize()
    # __materialized_end__

    if config["data_config"] == "custom":
        dataset_config = MyCustomDataConfig()
    else:
        # __options__
        options = DataConfig.default_ingest_options()
        # The guide's `options.resource_limits.object_store_memory = 10e9` is an
        # AttributeError on Ray 2.60 (a read-only property): the same limit, set.
        options.resource_limits = options.resource_limits.copy(object_store_memory=10e9)
        # __custom_split__
        dataset_config = tunecore.DataConfig(datasets_to_split=["train"], execution_options=options)

    my_trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config=config["train_loop_config"],
        scaling_config=ScalingConfig(num_workers=1),
        datasets={"train": train_ds},
        dataset_config=dataset_config,
        run_config=tunecore.RunConfig(
            name=f"train-trial_id={tunecore.get_context().get_trial_id()}",
            callbacks=[TuneReportCallback()],
            storage_path=TRAIN_STORAGE,
        ),
    )
    my_trainer.fit()


tuner = tunecore.Tuner(
    train_driver_fn,
    param_space={
        "data_config": tunecore.grid_search(["default", "custom"]),
        "train_loop_config": {"epochs": 2, "batch_size": 8},
    },
    tune_config=tunecore.TuneConfig(max_concurrent_trials=1),
)
results = tuner.fit()

assert len(results) == 2 and not results.errors, results.errors
for result in results:
    # Both epochs read every row of the one worker's shard, normalized.
    assert result.metrics["rows"] == 60, result.metrics
    assert 0 < result.metrics["max_length"] <= 1.0, result.metrics
    assert result.metrics["training_iteration"] == 1, result.metrics
assert sorted(result.config["data_config"] for result in results) == ["custom", "default"]
