# mypy: ignore-errors
"""`ResultGrid` with NaN metrics, `get_best_result(filter_nan_and_inf=)`,
`get_dataframe(filter_metric=, filter_mode=)`, and `Result.from_path`.

Follows Ray Tune's `ResultGrid` and `Result` API docs (api/result_grid.rst:
`ResultGrid.get_best_result`, `get_dataframe`, `num_errors`,
`num_terminated`; `Result.from_path`, `metrics_dataframe`,
`get_best_checkpoint`) and the "Analyzing Tune Experiment Results" guide,
with a trial that diverges to NaN.
"""

import math
import os
import tempfile

import tunecore as tune
from tunecore import Result


def trainable(config):
    for step in range(1, 5):
        loss = float("nan") if config["lr"] > 1 and step >= 2 else config["lr"] / step
        with tempfile.TemporaryDirectory() as d:
            open(os.path.join(d, "s"), "w").write(str(step))
            tune.report({"loss": loss, "step": step}, checkpoint=tune.Checkpoint.from_directory(d))


tuner = tune.Tuner(
    trainable,
    param_space={"lr": tune.grid_search([0.5, 0.9, 5.0])},
    run_config=tune.RunConfig(storage_path=os.path.abspath("results"), name="nan_exp"),
)
results = tuner.fit()
assert results.num_errors == 0 and results.num_terminated == 3

# NaN is skipped by default: the best is the smallest real loss.
best = results.get_best_result(metric="loss", mode="min")
assert best.config["lr"] == 0.5 and best.metrics["loss"] == 0.125
best_any = results.get_best_result(metric="loss", mode="min", filter_nan_and_inf=False)
print("with NaN kept:", best_any.config, best_any.metrics["loss"])
# scope="all": the best loss a trial ever reported.
assert results.get_best_result(metric="loss", mode="min", scope="all").config["lr"] == 0.5

df = results.get_dataframe(filter_metric="loss", filter_mode="min")
assert len(df) == 3
by_lr = dict(zip(df["config/lr"], df["loss"], strict=False))
assert by_lr[0.5] == 0.125 and by_lr[0.9] == 0.225
assert by_lr[5.0] == 5.0, by_lr  # its best real loss, at step 1
last = results.get_dataframe()
assert math.isnan(dict(zip(last["config/lr"], last["loss"], strict=False))[5.0])

# A result read back from its trial directory alone.
diverged = next(r for r in results if r.config["lr"] == 5.0)
again = Result.from_path(diverged.path)
assert again.config == {"lr": 5.0}
assert again.metrics["step"] == 4 and math.isnan(again.metrics["loss"])
assert len(again.metrics_dataframe) == 4
ckpt = again.get_best_checkpoint(metric="loss", mode="min")
with ckpt.as_directory() as d:
    assert open(os.path.join(d, "s")).read() == "1"
