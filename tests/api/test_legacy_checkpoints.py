"""Ray's deprecated checkpoint arguments, on both ways in: `tunecore.run(...)`
and `Tuner(_tuner_kwargs={...})`.

The expected counts are Ray 2.60's, measured with the same trainable (a
class, two iterations): `tune.run` without `checkpoint_at_end` anywhere
saves no end checkpoint, an explicit `checkpoint_at_end=False` is no
setting (a config's True stays), and the `Tuner` saves one by default for a
class, which `_tuner_kwargs={"checkpoint_at_end": False}` does not undo.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tunecore
from tunecore import CheckpointConfig, RunConfig
from tunecore.api.legacy_checkpoints import with_legacy_checkpoints


class Steps(tunecore.Trainable):
    def step(self) -> dict[str, float]:
        return {"loss": 1.0 / (self.iteration + 1)}

    def save_checkpoint(self, checkpoint_dir: str) -> None:
        Path(checkpoint_dir, "iteration").write_text(str(self.iteration))

    def load_checkpoint(self, checkpoint: Any) -> None:
        pass


def saved(trial_path: str | Path | None) -> list[str]:
    assert trial_path is not None
    return sorted(path.name for path in Path(trial_path).glob("checkpoint_*"))


# -- the mapping -----------------------------------------------------------------------------------


@pytest.mark.parametrize("given", [None, True, False])
def test_an_explicit_false_checkpoint_at_end_leaves_the_configs_value(given: bool | None) -> None:
    config = CheckpointConfig(checkpoint_at_end=given)
    assert with_legacy_checkpoints(config, {"checkpoint_at_end": False}) is config
    with pytest.warns(DeprecationWarning, match=r"checkpoint_config\.checkpoint_at_end"):
        ended = with_legacy_checkpoints(config, {"checkpoint_at_end": True})
    assert ended.checkpoint_at_end is True


def test_each_argument_set_overrides_its_field_and_the_unset_ones_do_not() -> None:
    config = CheckpointConfig(num_to_keep=5, checkpoint_frequency=3, checkpoint_score_order="min")
    unset = {
        "checkpoint_freq": 0,
        "checkpoint_at_end": None,
        "keep_checkpoints_num": None,
        "checkpoint_score_attr": None,
    }
    assert with_legacy_checkpoints(config, unset) is config
    with pytest.warns(DeprecationWarning, match="keep_checkpoints_num is deprecated"):
        mapped = with_legacy_checkpoints(
            config, {"keep_checkpoints_num": 2, "checkpoint_score_attr": "acc", "other": 1}
        )
    assert mapped == CheckpointConfig(
        num_to_keep=2,
        checkpoint_frequency=3,
        checkpoint_score_attribute="acc",
        checkpoint_score_order="max",
    )
    with pytest.warns(DeprecationWarning, match="checkpoint_freq is deprecated"):
        mapped = with_legacy_checkpoints(
            config, {"checkpoint_freq": 1, "checkpoint_score_attr": "min-loss"}
        )
    assert (
        mapped.num_to_keep,
        mapped.checkpoint_frequency,
        mapped.checkpoint_score_attribute,
        mapped.checkpoint_score_order,
    ) == (5, 1, "loss", "min")


def test_a_bad_value_is_the_configs_error_naming_the_field() -> None:
    with (
        pytest.warns(DeprecationWarning, match="keep_checkpoints_num"),
        pytest.raises(ValueError, match="num_to_keep"),
    ):
        with_legacy_checkpoints(CheckpointConfig(), {"keep_checkpoints_num": 0})


# -- tunecore.run ----------------------------------------------------------------------------------


@pytest.mark.slow  # five runs on Ray
@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # asserted above
def test_run_saves_an_end_checkpoint_only_when_one_is_asked_for(tmp_path: Path) -> None:
    def checkpoints(**arguments: Any) -> list[str]:
        analysis = tunecore.run(
            Steps,
            stop={"training_iteration": 2},
            storage_path=str(tmp_path),
            verbose=0,
            **arguments,
        )
        [trial] = analysis.trials
        return saved(trial.path)

    assert checkpoints() == []
    assert checkpoints(checkpoint_at_end=False) == []
    assert checkpoints(checkpoint_at_end=True) == ["checkpoint_000002"]
    assert checkpoints(
        checkpoint_config=CheckpointConfig(checkpoint_at_end=True), checkpoint_at_end=False
    ) == ["checkpoint_000002"]
    assert checkpoints(checkpoint_config=CheckpointConfig(num_to_keep=5), checkpoint_freq=1) == [
        "checkpoint_000001",
        "checkpoint_000002",
    ]


# -- Tuner(_tuner_kwargs=...) ----------------------------------------------------------------------


def tuner_checkpoints(
    tmp_path: Path, config: CheckpointConfig, tuner_kwargs: dict[str, Any]
) -> list[str]:
    run_config = RunConfig(
        storage_path=str(tmp_path),
        executor="in_process",
        verbose=0,
        stop={"training_iteration": 2},
        checkpoint_config=config,
    )
    [result] = tunecore.Tuner(Steps, run_config=run_config, _tuner_kwargs=tuner_kwargs).fit()
    return saved(result.path)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # asserted above
def test_tuner_kwargs_false_leaves_a_class_trainables_end_checkpoint(tmp_path: Path) -> None:
    assert tuner_checkpoints(tmp_path, CheckpointConfig(), {}) == ["checkpoint_000002"]
    assert tuner_checkpoints(tmp_path, CheckpointConfig(), {"checkpoint_at_end": False}) == [
        "checkpoint_000002"
    ]
    assert tuner_checkpoints(
        tmp_path, CheckpointConfig(checkpoint_at_end=False), {"checkpoint_at_end": True}
    ) == ["checkpoint_000002"]
    assert (
        tuner_checkpoints(
            tmp_path, CheckpointConfig(checkpoint_at_end=False), {"checkpoint_at_end": False}
        )
        == []
    )
