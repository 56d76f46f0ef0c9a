# mypy: ignore-errors
"""Population Based Training over a function trainable that checkpoints
every other step, perturbed at an odd one.

Row 531's pattern (docs/ray-examples.md): the trainable reports a
checkpoint with its even steps only (`tune.report(metrics,
checkpoint=...)`, as Ray's PBT guide writes it, minus the guide's
checkpoint at every step), and PBT perturbs at step 3. Ray Tune 2.60's PBT
clones the checkpoint a donor's save returned at the donor's own
perturbation, and a function trainable's save is the checkpoint reported
with that result: none at step 3. So every exploit is skipped ("[pbt]: no
checkpoint for trial ... Skip exploit for Trial ..."): each trial keeps
its config, no policy line is written, and each trial's checkpoint is the
one it reported last (step 4). The better trials train faster, so the
worst one is ranked last, below two donors with a step-2 checkpoint.
"""

import os
import tempfile
import time

import tunecore as tune
from tunecore.schedulers import PopulationBasedTraining

STEPS = 5


def train_fn(config):
    accuracy = 0.0
    for step in range(1, STEPS + 1):
        time.sleep(0.2 / config["lr"])  # an epoch of training: the better, the faster
        accuracy += config["lr"]
        metrics = {"mean_accuracy": accuracy, "step": step}
        if step % 2 == 0:
            with tempfile.TemporaryDirectory() as directory:
                with open(os.path.join(directory, "step.txt"), "w") as file:
                    file.write(str(step))
                tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(directory))
        else:
            tune.report(metrics)


if __name__ == "__main__":
    lrs = [0.1, 0.2, 0.3, 0.4]
    scheduler = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=3,
        quantile_fraction=0.5,
        hyperparam_mutations={"lr": lrs},
    )
    tuner = tune.Tuner(
        tune.with_resources(train_fn, {"cpu": 0.5}),
        param_space={"lr": tune.grid_search(lrs)},
        tune_config=tune.TuneConfig(metric="mean_accuracy", mode="max", scheduler=scheduler),
        run_config=tune.RunConfig(name="pbt_checkpoint_every_other_step"),
    )
    results = tuner.fit()

    assert results.num_errors == 0
    assert sorted(result.config["lr"] for result in results) == lrs
    for result in results:
        assert "@perturbed" not in result.metrics["experiment_tag"], result.metrics
        assert result.metrics["training_iteration"] == STEPS
        with result.checkpoint.as_directory() as directory:
            with open(os.path.join(directory, "step.txt")) as file:
                assert file.read() == "4"
    assert not os.path.exists(os.path.join(results.experiment_path, "pbt_global.txt"))
    print("configs kept:", sorted(result.config["lr"] for result in results))
