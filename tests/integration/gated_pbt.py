"""Two PBT trials on Ray whose meeting is made certain with gate files,
not with sleeps: `low` (rate 1) and `top` (rate 10) report `score = rate
* step` for STEPS steps, and `top` waits for `low`'s first result to be
in before reporting its own (so PBT ranks both and asks `top` for its save
of step 1), `low` waits for that save before its second result (at which
PBT picks `top` as its donor), and `top` waits for that result before its
second step (so it is still live, ranked on its step-1 score, when `low`
exploits it). Without the last gate a test failed one run in three:
`top` could finish before `low`'s second result, leaving `low` alone; a
test that ran the two with sleeps failed on a loaded CI machine, where one
trial's actor started steps after the other's.

Used by the tests of PBT's donor rule (`test_pbt_null_donor_ray`) and of
exploits within a bucket (`test_s3`)."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import tunecore
from tests.integration.shipping import shipped_by_value
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import JsonDict
from tunecore.schedulers import PopulationBasedTraining
from tunecore.shell.callbacks import Callback
from tunecore.shell.trial_view import Trial

STEPS = 4
GATE_S = 180.0  # a gate not opened by then fails the trial: nothing hangs


def wait_for(gate: Path) -> None:
    deadline = time.monotonic() + GATE_S
    while not gate.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the gate {gate} never opened")
        time.sleep(0.02)


def paced(config: JsonDict) -> None:
    """`score = rate * step` for STEPS steps, each step's state in a
    checkpoint when `checkpoints` (resuming from one), gated as the module
    docstring says."""
    gates = Path(str(config["gates"]))
    role, rate = config["role"], float(str(config["rate"]))
    step = 0
    restored = tunecore.get_checkpoint()
    if restored is not None:
        with restored.as_directory() as directory:
            step = int(Path(directory, "step").read_text())
    while step < STEPS:
        step += 1
        if role == "top" and step == 1:
            wait_for(gates / "low-result-1")
        if role == "top" and step == 2:
            wait_for(gates / "low-result-2")
        if role == "low" and step == 2:
            wait_for(gates / "top-saved")
        metrics = {"score": rate * step, "step": step}
        if not config["checkpoints"]:
            tunecore.report(metrics)
            continue
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "step").write_text(str(step))
            tunecore.report(metrics, checkpoint=tunecore.Checkpoint.from_directory(directory))


class OpenGates(Callback):
    """In the driver: opens `low-result-1` and `low-result-2` once `low`'s
    first and second results are in, `top-saved` once `top`'s first save
    is done."""

    def __init__(self, gates: Path) -> None:
        self.gates = gates

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: JsonDict
    ) -> None:
        if trial.config["role"] == "low" and result.get("step") in (1, 2):
            (self.gates / f"low-result-{result['step']}").touch()

    def on_trial_save(self, iteration: int, trials: list[Trial], trial: Trial) -> None:
        if trial.config["role"] == "top":
            (self.gates / "top-saved").touch()


def fit(
    storage_path: str,
    gates: Path,
    *,
    checkpoints: bool,
    name: str = "pbt",
    callbacks: Sequence[Callback] = (),
) -> tunecore.ResultGrid:
    """The two trials under PBT (perturbing at each step), in `storage_path`
    (a directory or a URI), with `callbacks` beside the gates'."""
    gates.mkdir()
    pbt = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=1,
        hyperparam_mutations={"rate": [0.5, 1.0, 2.0, 10.0, 20.0]},
        quantile_fraction=0.5,
        resample_probability=0.0,
        seed=3,
    )
    with shipped_by_value(sys.modules[__name__]):
        return Tuner(
            paced,
            param_space={
                "role": tunecore.grid_search(["low", "top"]),
                "rate": tunecore.sample_from(
                    lambda spec: 1.0 if spec.config.role == "low" else 10.0
                ),
                "gates": str(gates),
                "checkpoints": checkpoints,
            },
            tune_config=TuneConfig(metric="score", mode="max", scheduler=pbt),
            run_config=RunConfig(
                name=name,
                storage_path=storage_path,
                verbose=0,
                callbacks=[OpenGates(gates), *callbacks],
            ),
        ).fit()


def first_trial(results: tunecore.ResultGrid) -> tunecore.Result:
    """`low`'s result: the grid's first, as a ResultGrid holds its trials
    in the order they were created. Not found by the id in its metrics:
    an exploit at `low`'s last step restores it from `top`'s checkpoint,
    and its last result is then the one that checkpoint was taken with,
    `top`'s own (as on Ray, where a restore sets the trial's last result
    to its checkpoint's); nor by its tag or config, once `low` has taken
    `top`'s."""
    first = results[0]
    assert "_00000" in first.path, first.path
    return first
