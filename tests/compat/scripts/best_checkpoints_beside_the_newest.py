# mypy: ignore-errors
"""`Result.best_checkpoints` with `num_to_keep` when the newest checkpoint
is not one of the best: the best `num_to_keep`, worst first, without the
newest, which is kept on disk besides them as the restore point and is
`Result.checkpoint`. `ExperimentAnalysis.get_last_checkpoint` is the newest
*of the best* (Ray's is `get_best_checkpoint(trial, "training_iteration",
"max")` over them).

Found with ray-project/ray#45021's script (PB2 and `CheckpointConfig(
checkpoint_score_attribute="eval_accuracy", num_to_keep=...,
checkpoint_score_order="max")` with an accuracy that rises, then falls):
tunecore listed num_to_keep + 1 best checkpoints, the newest among them
(docs/ray-examples.md #603). Ray Tune 2.60 answers as asserted here.
"""

import os
import tempfile
from pathlib import Path

import tunecore as tune
from tunecore import ExperimentAnalysis

LOSSES = [9.0, 9.0, 9.0, 9.0, 9.0, 1.0, 1.0, 1.0, 1.0, 1.5]


def losses(config):
    for step, loss in enumerate(LOSSES, start=1):
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "step").write_text(str(step))
            tune.report({"loss": loss}, checkpoint=tune.Checkpoint.from_directory(directory))


storage = tempfile.mkdtemp()
results = tune.Tuner(
    losses,
    tune_config=tune.TuneConfig(metric="loss", mode="min"),
    run_config=tune.RunConfig(
        storage_path=storage,
        checkpoint_config=tune.CheckpointConfig(
            num_to_keep=2, checkpoint_score_attribute="loss", checkpoint_score_order="min"
        ),
    ),
).fit()
result = results[0]


def steps(pairs):
    return [
        (Path(checkpoint.path, "step").read_text(), metrics["loss"])
        for checkpoint, metrics in pairs
    ]


# The two best (ties go to the newer), worst first; not the newest (loss 1.5).
assert steps(result.best_checkpoints) == [("8", 1.0), ("9", 1.0)], steps(result.best_checkpoints)
assert Path(result.checkpoint.path, "step").read_text() == "10"
assert len([name for name in os.listdir(result.path) if name.startswith("checkpoint_")]) == 3

analysis = ExperimentAnalysis(results.experiment_path)
[trial] = analysis.trials
assert Path(analysis.get_best_checkpoint(trial, "loss", "min").path, "step").read_text() == "8"
assert Path(analysis.get_last_checkpoint(trial).path, "step").read_text() == "9"
assert steps(tune.ResultGrid(analysis)[0].best_checkpoints) == [("8", 1.0), ("9", 1.0)]
print(
    "best",
    steps(result.best_checkpoints),
    "newest",
    Path(result.checkpoint.path, "step").read_text(),
)
