"""On Ray, PBT exploits no donor whose only checkpoint is tunecore's null
one (a function trainable that never reported a checkpoint), as Ray Tune
2.60 skips the exploit ("[pbt]: no checkpoint for trial ... Skip exploit"):
the lower trial goes on with its own config, counting on. A function that
does report checkpoints is exploited as before (docs/ray-examples.md, row
421: the user's Lightning + PB2 run exploited from a null checkpoint and
crashed on the donor's config): a donor that reported a checkpoint with
its result at its perturbation is cloned from that checkpoint, as Ray
Tune 2.60 clones the save it asked for there.

Which trial meets which donor is made certain with gate files: `top` waits
for `low`'s first result to be in before reporting its own (so PBT ranks
both and saves `top`'s checkpoint of step 1), `low` waits for that save
before its second result, at which PBT picks `top` as its donor, and `top`
waits for that result before its second step (so it is still live, ranked
on its step-1 score, with no later save, when `low` exploits it). Session
53's test of the clone had no last gate and failed one run in three: `top`
could finish before `low`'s second result, leaving `low` alone."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pytest

import tunecore
from tests.integration.shipping import shipped_by_value
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import CheckpointSaved, JsonDict
from tunecore.schedulers import PopulationBasedTraining
from tunecore.shell.callbacks import Callback
from tunecore.shell.eventlog import read_log
from tunecore.shell.replay import replay
from tunecore.shell.trial_view import Trial

pytestmark = [pytest.mark.usefixtures("ray_cluster"), pytest.mark.slow]

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


def fit(tmp_path: Path, checkpoints: bool) -> tuple[tunecore.ResultGrid, Path]:
    gates = tmp_path / "gates"
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
        results = Tuner(
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
                name="pbt", storage_path=str(tmp_path), verbose=0, callbacks=[OpenGates(gates)]
            ),
        ).fit()
    return results, tmp_path / "pbt"


def test_a_donor_that_never_reported_a_checkpoint_is_not_cloned(tmp_path: Path) -> None:
    results, experiment = fit(tmp_path, checkpoints=False)

    assert [r.error for r in results] == [None, None]
    for result in results:
        assert result.config["rate"] == (1.0 if result.config["role"] == "low" else 10.0)
        assert "@perturbed" not in str(result.metrics["experiment_tag"])
        progress = result.metrics_dataframe
        assert progress is not None
        iterations = list(progress["training_iteration"])
        assert iterations == list(range(1, STEPS + 1))  # counted on, never taken over
        assert result.checkpoint is None  # as on Ray: an empty save is no checkpoint
    saved = [e for e in read_log(experiment).events if isinstance(e, CheckpointSaved)]
    assert saved, "PBT saved the upper trial's checkpoint"
    assert all(e.checkpoint.empty is True for e in saved)  # null: nothing reported
    scheduler = replay(experiment).state.scheduler
    assert isinstance(scheduler, PopulationBasedTraining)
    assert scheduler.num_perturbations == 0
    assert scheduler.num_checkpoints >= 1


def test_a_donor_with_a_checkpoint_at_its_perturbation_is_cloned(tmp_path: Path) -> None:
    results, experiment = fit(tmp_path, checkpoints=True)

    assert [r.error for r in results] == [None, None]
    # The first trial (grid order: "low") was exploited at its step 2 and
    # took the donor's whole config, its role too, and the donor's state of
    # step 1 (the checkpoint `top` reported with its result at its
    # perturbation): it went on from step 2 again. Found by its id, not its
    # tag: once both are "top", either may be exploited again later.
    low = next(r for r in results if str(r.metrics["trial_id"]).endswith("_00000"))
    assert "@perturbed" in str(low.metrics["experiment_tag"])
    assert low.config["role"] == "top"
    progress = low.metrics_dataframe
    assert progress is not None
    assert list(progress["step"])[:3] == [1, 2, 2]
    saved = [e for e in read_log(experiment).events if isinstance(e, CheckpointSaved)]
    assert all(e.checkpoint.of_its_result for e in saved)  # each step reported one
    scheduler = replay(experiment).state.scheduler
    assert isinstance(scheduler, PopulationBasedTraining)
    assert scheduler.clones_perturbation_save
    assert scheduler.num_perturbations >= 1
