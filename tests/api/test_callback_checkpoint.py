"""A callback that sets `should_checkpoint` in a result gets the checkpoint,
as in Ray Tune, and the run replays without the callback."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from pathlib import Path

import tunecore
from tunecore import Callback, CheckpointConfig, RunConfig, Tuner
from tunecore.model import JsonDict, JsonValue
from tunecore.shell.trial_view import Trial


class Counter(tunecore.Trainable):
    def step(self) -> JsonDict:
        return {"score": float(self.iteration), "done": self.iteration + 1 >= 4}

    def save_checkpoint(self, checkpoint_dir: str) -> JsonDict:
        return {"iteration": self.iteration}

    def load_checkpoint(self, checkpoint: str | JsonDict) -> None:
        pass


class CheckpointAtTwo(Callback):
    def on_trial_result(
        self, iteration: int, trials: object, trial: Trial, result: Mapping[str, JsonValue]
    ) -> None:
        if result["training_iteration"] == 2:
            assert isinstance(result, MutableMapping)
            result["should_checkpoint"] = True


def test_a_callback_asking_for_a_checkpoint_gets_it(tmp_path: Path) -> None:
    run = RunConfig(
        name="exp",
        storage_path=str(tmp_path),
        verbose=0,
        executor="in_process",
        callbacks=[CheckpointAtTwo()],
        checkpoint_config=CheckpointConfig(checkpoint_at_end=False),
    )
    (result,) = Tuner(Counter, run_config=run).fit()
    assert sorted(p.name for p in result.path.glob("checkpoint_*")) == ["checkpoint_000002"]
    assert result.checkpoint is not None
    # The request is in the logged result: replay needs no callback.
    replayed = tunecore.replay(tmp_path / "exp")
    (trial,) = replayed.state.trials.values()
    assert [c.training_iteration for c in trial.checkpoints.persistent] == [2]
