"""The workload of Ray Tune's release tests (`from ray.tune.utils.release_test_util
import timed_tune_run`): trials that report at a set rate for a set time,
optionally saving checkpoints of a set size, run under a time budget.

Ray's scalability tests (`release/tune_tests/scalability_tests/workloads/`)
are scripts built on `timed_tune_run`; with this module they run on
tunecore after only their imports are rewritten, and measure tunecore's
bookkeeping, result throughput and checkpoint overhead the same way. The
checkpoints hold random bytes (their size is what counts), written raw.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tunecore.api.run import run
from tunecore.core.search.domains import uniform
from tunecore.shell.callbacks import Callback
from tunecore.shell.storage.own_files import write_atomic
from tunecore.shell.trainable import Checkpoint, Trainable, report
from tunecore.shell.trial_view import Trial

OUTPUT_ENV = "TEST_OUTPUT_JSON"
"""Where a run's summary goes (Ray's release tooling reads it)."""
PROGRESS_DEFAULT = "/tmp/release_test_out.json"
SUMMARY_DEFAULT = "/tmp/tune_test.json"
_BYTES_PER_ITEM = 8  # a float64, as Ray counts the checkpoint's size


def _write_json_atomically(result: dict[str, Any], default_path: str) -> None:
    """Write `result` where `TEST_OUTPUT_JSON` says (else `default_path`) so a
    reader never sees half a file."""
    target = Path(os.environ.get(OUTPUT_ENV, default_path))
    write_atomic(target, json.dumps(result), shared=True)


def _trial_states(trials: Sequence[Trial]) -> dict[str, int]:
    return dict(Counter(trial.status for trial in trials))


class ProgressCallback(Callback):
    """Writes the trials' status counts at most once a minute, so a long
    release run shows how far it got."""

    def __init__(self) -> None:
        self.last_update = 0.0
        self.update_interval = 60.0

    def on_step_end(self, iteration: int, trials: Sequence[Trial], **info: Any) -> None:
        now = time.time()
        if now - self.last_update <= self.update_interval:
            return
        progress = {"last_update": now, "iteration": iteration}
        _write_json_atomically(
            {**progress, "trial_states": _trial_states(trials)}, PROGRESS_DEFAULT
        )
        self.last_update = now


def _write_random_checkpoint(path: Path, size_b: int) -> None:
    np.random.uniform(0, 1, size=size_b // _BYTES_PER_ITEM).tofile(path)


def _checkpoints_at(iteration: int, every: int, size_b: int) -> bool:
    """Whether the workload saves at `iteration` (`every` < 0: never; 0, a
    checkpoint period shorter than one result: every result)."""
    if every < 0 or size_b <= 0:
        return False
    return every == 0 or iteration % every == 0


class TestDurableTrainable(Trainable):
    """The class form of the workload: reports `score` once per step for
    `num_iters` steps, saving `checkpoint_size_b` bytes per checkpoint."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.setup_env()
        super().__init__(*args, **kwargs)

    def setup_env(self) -> None:
        """A subclass's hook for the environment (Ray's release tests set
        cloud credentials here), before the trainable is set up."""

    def setup(self, config: dict[str, Any]) -> None:
        self._num_iters = int(config["num_iters"])
        self._sleep_time = float(config["sleep_time"])
        self._score = float(config["score"])
        self._checkpoint_size_b = int(config["checkpoint_size_b"])
        self._iter = 0

    def step(self) -> dict[str, Any]:
        if self._iter > 0:
            time.sleep(self._sleep_time)
        result: dict[str, Any] = {"score": self._iter + self._score}
        if self._iter >= self._num_iters:
            result["done"] = True
        self._iter += 1
        return result

    def save_checkpoint(self, checkpoint_dir: str) -> None:
        _write_random_checkpoint(Path(checkpoint_dir) / "bogus.ckpt", self._checkpoint_size_b)

    def load_checkpoint(self, checkpoint: object) -> None:
        """The checkpoint holds no state worth restoring (random bytes)."""


def function_trainable(config: dict[str, Any]) -> None:
    """The function form of the workload: `num_iters` results `score`, one
    every `sleep_time` seconds, a checkpoint of `checkpoint_num_files`
    files every `checkpoint_iters` results."""
    num_iters = int(config["num_iters"])
    sleep_time = float(config["sleep_time"])
    size_b = int(config["checkpoint_size_b"])
    for iteration in range(num_iters):
        metrics = {"score": iteration + config["score"]}
        if _checkpoints_at(iteration, int(config["checkpoint_iters"]), size_b):
            with tempfile.TemporaryDirectory() as checkpoint_dir:
                for index in range(int(config["checkpoint_num_files"])):
                    _write_random_checkpoint(Path(checkpoint_dir) / f"bogus_{index}.ckpt", size_b)
                report(metrics, checkpoint=Checkpoint.from_directory(checkpoint_dir))
        else:
            report(metrics)
        time.sleep(sleep_time)


def _is_durable(storage_path: object) -> bool:
    return isinstance(storage_path, str) and storage_path.startswith(("s3://", "gs://"))


def timed_tune_run(  # noqa: PLR0917 - Ray's signature, called positionally by its scripts
    name: str,
    num_samples: int,
    results_per_second: float = 1,
    trial_length_s: float = 1,
    max_runtime: int = 300,
    checkpoint_freq_s: float = -1,
    checkpoint_size_b: int = 0,
    checkpoint_num_files: int = 1,
    **tune_kwargs: Any,
) -> bool:
    """Run `num_samples` trials of the workload with `tune.run(**tune_kwargs)`
    (actors reused, as Ray's does) and say whether it took at most
    `max_runtime` seconds; the summary goes to `TEST_OUTPUT_JSON`. With an
    `s3://` or `gs://` `storage_path` the class form runs, checkpointing by
    frequency."""
    sleep_time = 1.0 / results_per_second
    checkpoint_iters = int(checkpoint_freq_s / sleep_time) if checkpoint_freq_s >= 0 else -1
    config = {
        "score": uniform(0.0, 1.0),
        "num_iters": int(trial_length_s / sleep_time),
        "sleep_time": sleep_time,
        "checkpoint_iters": checkpoint_iters,
        "checkpoint_size_b": checkpoint_size_b,
        "checkpoint_num_files": checkpoint_num_files,
    }
    print(f"Starting benchmark with config: {config}")
    run_kwargs: dict[str, Any] = {"reuse_actors": True, "verbose": 2, **tune_kwargs}
    trainable: Any = function_trainable
    if _is_durable(tune_kwargs.get("storage_path")):
        trainable = TestDurableTrainable
        run_kwargs["checkpoint_freq"] = checkpoint_iters
    start = time.monotonic()
    analysis = run(
        trainable, config=config, num_samples=num_samples, raise_on_failed_trial=False, **run_kwargs
    )
    time_taken = time.monotonic() - start
    summary = {
        "time_taken": time_taken,
        "trial_states": _trial_states(analysis.trials),
        "last_update": time.time(),
    }
    _write_json_atomically(summary, SUMMARY_DEFAULT)
    passed = time_taken <= max_runtime
    print(_verdict(name, time_taken, max_runtime))
    return passed


def _verdict(name: str, time_taken: float, max_runtime: float) -> str:
    """What `timed_tune_run` prints at its end: Ray's two lines word for
    word, since a release pipeline greps them (`--- PASSED: NAME ::: ...`)."""
    if time_taken <= max_runtime:
        return (
            f"The {name} test took {time_taken:.2f} seconds, which "
            f"is below the budget of {max_runtime:.2f} seconds. "
            f"Test successful. \n\n"
            f"--- PASSED: {name.upper()} ::: "
            f"{time_taken:.2f} <= {max_runtime:.2f} ---"
        )
    return (
        f"The {name} test took {time_taken:.2f} seconds, but should not "
        f"have exceeded {max_runtime:.2f} seconds. Test failed. \n\n"
        f"--- FAILED: {name.upper()} ::: "
        f"{time_taken:.2f} > {max_runtime:.2f} ---"
    )
