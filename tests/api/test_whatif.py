"""What-if: a recorded experiment's trials under another scheduler, over
their recorded curves, in virtual time (`tunecore.api.whatif`, `tunecore
simulate --from`)."""

from __future__ import annotations

from pathlib import Path

import pytest

import tunecore
from tunecore import RunConfig, TuneConfig
from tunecore.api.whatif import recording, what_if
from tunecore.cli import main
from tunecore.core.schedulers.asha import ASHAScheduler
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.schedulers.pbt import PopulationBasedTraining
from tunecore.model import JsonDict, Mode, Resources


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    """Good x near 0.3; slower steps for larger x."""
    x = config["x"]
    assert isinstance(x, float)
    return {"loss": (x - 0.3) ** 2 + 1.0 / iteration}, 1.0 + x


def asha(reduction_factor: float) -> ASHAScheduler:
    return ASHAScheduler(max_t=27, grace_period=1, reduction_factor=reduction_factor)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An ASHA run (reduction factor 3) of 30 trials on 4 CPUs, simulated."""
    root = tmp_path_factory.mktemp("recorded")
    tunecore.simulate(
        curve,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=TuneConfig(
            num_samples=30, metric="loss", mode="min", scheduler=asha(3), seed=1
        ),
        run_config=RunConfig(name="orig", storage_path=str(root), verbose=0),
        cluster=Resources(cpu=4),
    )
    return root / "orig"


def test_the_same_policy_reproduces_the_original_exactly(recorded: Path) -> None:
    result = what_if(recorded, asha(3))
    assert (result.metric, result.mode) == ("loss", Mode.MIN)  # the experiment's
    assert result.what_if == result.original
    assert result.original.stopped_early > 0


def test_another_reduction_factor_changes_what_is_spent(recorded: Path) -> None:
    harsher = what_if(recorded, asha(4))
    assert harsher.what_if.iterations < harsher.original.iterations
    assert harsher.what_if.compute_s < harsher.original.compute_s
    # The best trial survives the harsher cut.
    assert harsher.what_if.best == harsher.original.best


def test_a_trial_the_policy_keeps_past_its_curve_is_named_never_extended(
    recorded: Path,
) -> None:
    found = recording(recorded)
    fifo = what_if(recorded, FIFOScheduler())
    stopped = {t.trial_id for t in found.trials if t.stopped_early}
    assert stopped
    assert set(fifo.what_if.cut_short) == stopped
    # Nothing past a recorded curve counts: every trial ran exactly its curve.
    assert fifo.what_if.iterations == sum(len(t.results) for t in found.trials)
    assert fifo.what_if.stopped_early == 0


def test_a_policy_that_changes_configs_is_refused(recorded: Path) -> None:
    pbt = PopulationBasedTraining(hyperparam_mutations={"x": [0.1, 0.2]})
    with pytest.raises(ValueError, match="PopulationBasedTraining: it changes configs"):
        what_if(recorded, pbt)


def test_the_table_shows_both_runs(recorded: Path) -> None:
    table = what_if(recorded, asha(4)).table()
    assert table.splitlines()[0] == "| | original | what-if |"
    assert "| curves cut short | - |" in table


@pytest.mark.parametrize(
    ("args", "check"),
    [
        (["--scheduler", "asha", "--max-t", "27", "--reduction-factor", "4"], "| iterations |"),
        (["--scheduler", "fifo"], "Cut short (the policy wanted more than was recorded): "),
    ],
)
def test_the_cli_prints_the_comparison(
    recorded: Path, capsys: pytest.CaptureFixture[str], args: list[str], check: str
) -> None:
    assert main(["simulate", "--from", str(recorded), *args]) == 0
    assert check in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--scheduler", "median", "--reduction-factor", "4"],
            "--reduction-factor: --scheduler median takes no such option",
        ),
        (
            ["--scheduler", "asha", "--reduction-factor", "0.5"],
            "--reduction-factor: ASHAScheduler.reduction_factor=0.5 is invalid",
        ),
    ],
)
def test_the_cli_names_the_flag_of_a_bad_option(
    recorded: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["simulate", "--from", str(recorded), *args]) == 2
    assert message in capsys.readouterr().err


class _StopAtLoss(tunecore.Stopper):
    """The user's own stopper: ends a trial once its loss is at most 0.2."""

    def __call__(self, trial_id: str, result: dict[str, object]) -> bool:
        loss = result["loss"]
        assert isinstance(loss, float)
        return loss <= 0.2

    def stop_all(self) -> bool:
        return False


def scored(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    """`curve`, with a score that rises as the loss falls (criteria stop at
    a value reached from below)."""
    metrics, seconds = curve(config, iteration)
    loss = metrics["loss"]
    assert isinstance(loss, float)
    return {"loss": loss, "score": -loss}, seconds


@pytest.mark.parametrize(
    "stop",
    [{"training_iteration": 4}, {"score": -0.2}, _StopAtLoss()],
    ids=["criterion-on-an-automatic-key", "criterion-on-a-metric", "stopper"],
)
def test_trials_ended_by_the_runs_stop_are_neither_cut_short_nor_stopped_early(
    tmp_path: Path, stop: object
) -> None:
    """A trial that a stopping criterion or the user's stopper ended was not
    stopped by its policy, and the what-if ends it at the same result: the
    same policy reproduces the run, and FIFO names no curve as cut short."""
    tunecore.simulate(
        scored,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=TuneConfig(num_samples=12, metric="loss", mode="min", seed=3),
        run_config=RunConfig(name="stopped", storage_path=str(tmp_path), verbose=0, stop=stop),
        cluster=Resources(cpu=2),
        max_iterations=10,
    )
    found = recording(tmp_path / "stopped")
    short = [t for t in found.trials if len(t.results) < 10]
    assert short, "the run's stop ended no trial early: the test proves nothing"
    assert all(t.ended_itself and not t.stopped_early for t in found.trials)
    fifo = what_if(tmp_path / "stopped", FIFOScheduler())
    assert fifo.what_if == fifo.original
    assert fifo.what_if.cut_short == ()


def test_trials_that_begin_again_when_resumed_are_replayed_along_their_runs(
    tmp_path: Path,
) -> None:
    """A simulated run whose trials save nothing when HyperBand pauses them
    (`fresh_on_resume`): they begin again from iteration 1, the recording
    splits them into their runs, and the what-if replays the run exactly."""
    from tunecore.core.schedulers.hyperband import HyperBandScheduler  # noqa: PLC0415

    def hyperband() -> HyperBandScheduler:
        return HyperBandScheduler(max_t=27, reduction_factor=3)

    tunecore.simulate(
        curve,
        param_space={"x": tunecore.uniform(0, 1)},
        tune_config=TuneConfig(
            num_samples=16, metric="loss", mode="min", scheduler=hyperband(), seed=4
        ),
        run_config=RunConfig(name="fresh", storage_path=str(tmp_path), verbose=0),
        cluster=Resources(cpu=4),
        fresh_on_resume=lambda config: True,
    )
    found = recording(tmp_path / "fresh")
    again = [t for t in found.trials if t.restarted]
    assert again, "HyperBand resumed no trial: the test proves nothing"
    assert all(t.iterations[t.starts[1]] == 1 for t in again)
    result = what_if(tmp_path / "fresh", hyperband())
    assert result.restarted == tuple(t.trial_id for t in again)
    assert result.what_if == result.original
