"""Ray Tune's `ray.tune.integration.ray_train`: a Ray Train run launched
from a tunecore trial reports to that trial, as Ray 2.60's documentation
tunes a Ray Train (V2) run::

    import ray.train
    import ray.train.torch
    from tunecore.integration.ray_train import TuneReportCallback

    def train_driver_fn(config):
        trainer = ray.train.torch.TorchTrainer(
            train_fn_per_worker,
            train_loop_config=config["train_loop_config"],
            scaling_config=ray.train.ScalingConfig(num_workers=2),
            run_config=ray.train.RunConfig(
                name=f"train-trial_id={tune.get_context().get_trial_id()}",
                callbacks=[TuneReportCallback()],
            ),
        )
        trainer.fit()

The trainer is Ray Train's own (tunecore includes none; under rewritten
imports, `tunecore.torch.TorchTrainer` given `tunecore.ScalingConfig` and
`tunecore.RunConfig` is the same trainer, see tunecore._ray_train_modules,
and the workers' `tunecore.report` is Ray Train's); the callback
runs on its controller, and each `ray.train.report(metrics, checkpoint=...)`
of the workers becomes one result of the trial: rank 0's metrics, with
`checkpoint_path` (the Train checkpoint's path in Train's storage) when it
carried a checkpoint, as in Ray Tune. The trial gets no checkpoint of its
own (Ray Train already stored it): `Result.checkpoint` is None and
`Result.metrics["checkpoint_path"]` leads to Train's.

Stoppers and schedulers see those results as any others. A trial stopped
(ASHA, a stopper, `fail_fast`, the time budget) aborts its Train run as
Ray Train's Ctrl-C does: the workers end, the placement group goes, and
`trainer.fit()` raises in the trial's function, which tunecore expects and
does not count as an error. A stop that lands before the run's first
result takes effect at that result.

Made outside a trial's function (outside a tunecore session), the
callback raises Ray's RuntimeError. Needs Ray Train's dependencies
(`pip install "ray[train]"`).
"""

from __future__ import annotations

import threading
from typing import Any

from tunecore.shell.trainable.session import TrialSession, current_session

try:
    import ray
    from ray.train import Checkpoint as TrainCheckpoint
    from ray.train.v2.api.callback import UserCallback
except ImportError as error:  # ray.train imports fsspec, pandas, pyarrow, requests
    raise ImportError(
        "tunecore.integration.ray_train needs Ray Train: pip install 'ray[train]'"
    ) from error

from tunecore.integration._train_mailbox import Mailbox

__all__ = ["CHECKPOINT_PATH_KEY", "TuneReportCallback"]

CHECKPOINT_PATH_KEY = "checkpoint_path"
"""The result key that holds the path of the checkpoint reported with it."""

_RELAY_KIND = "ray_train"


class TuneReportCallback(UserCallback):
    """Propagate metrics and checkpoint paths from Ray Train workers to the
    tunecore trial (module doc). Make it inside the trial's function."""

    def __init__(self) -> None:
        session = current_session()
        if session is None:
            raise RuntimeError(
                "TuneReportCallback must be used in a Tune session. Make it inside the "
                "function tunecore runs as a trial (Tuner(train_driver_fn, ...)), where the "
                "Ray Train trainer is built."
            )
        relay = session.relay(_RELAY_KIND, lambda: _TrainRelay(session))
        assert isinstance(relay, _TrainRelay)  # the only relay of its kind
        self._mailbox = relay.mailbox

    def after_report(
        self,
        run_context: object,  # Ray's TrainRunContext, from a private module: unused
        metrics: list[dict[str, Any]],
        checkpoint: TrainCheckpoint | None,
    ) -> None:
        """On the Train controller: rank 0's metrics, with the checkpoint's
        path, to the trial; waits while the result before is not taken."""
        result = metrics[0].copy()
        if checkpoint:
            result[CHECKPOINT_PATH_KEY] = checkpoint.path
        controller = ray.get_runtime_context().current_actor
        ray.get(self._mailbox.put.remote(result, controller))


class _TrainRelay:
    """The trial's end of the mailbox (a `Relay`, see
    tunecore.shell.trainable.relay): a thread that forwards each result the
    Train run puts there to the trial's session."""

    def __init__(self, session: TrialSession) -> None:
        # Ray types an actor's handle as the class itself or a handle, by turns.
        self.mailbox: Any = Mailbox.remote()
        self._session = session
        self._lock = threading.Lock()
        self._closed = False
        self._calls: list[ray.ObjectRef[None]] = []  # awaited before the mailbox goes
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._forward,
            name=f"tunecore-ray-train-{session.context.trial_id}",
            daemon=True,
        )
        self._thread.start()

    def _forward(self) -> None:
        try:
            while True:
                result: dict[str, Any] | None = ray.get(self.mailbox.get.remote())
                if result is None or not self._session.forward(result):
                    return  # closed: the function ended, or the trial is stopping
        except BaseException as error:  # a result the trial cannot take ends the run
            self._error = error
            self._close_mailbox(abort=True)

    def on_stop(self) -> bool:
        return self._close_mailbox(abort=True)

    def close(self) -> None:
        self._close_mailbox(abort=False)
        with self._lock:
            self._closed = True
        self._thread.join()
        try:
            ray.get(self._calls)
        finally:
            ray.kill(self.mailbox)
        if self._error is not None:
            raise self._error

    def _close_mailbox(self, *, abort: bool) -> bool:
        """Close the mailbox (aborting the Train run with `abort`), unless the
        relay is closed; whether it was sent."""
        with self._lock:
            if self._closed:
                return False
            self._calls.append(self.mailbox.close.remote(abort))
            return True
