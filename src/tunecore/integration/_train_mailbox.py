"""The channel from a Ray Train run's controller to the tunecore trial that
launched the run: a small Ray actor holding one result at a time.

Ray Tune's `TuneReportCallback` puts each result on a `ray.util.queue.Queue`
of one place that the trial reads; this is that queue, with one more thing
a trial that may stop needs: it can be closed. The controller (an async
actor whose control loop calls the callback synchronously) waits in `put`
while the result before has not been taken, so a Train run is at most one
result ahead of its trial, as in Ray Tune. Once the trial stops, `close`
wakes that wait and aborts the controller (Ray Train's own graceful abort,
the one its Ctrl-C handler sends: the workers end, the placement group is
removed, the controller exits), and a later `put` aborts the run it comes
from; the aborts are sent without waiting, since the controller can only
run its `abort` once its `put` has returned.

Rules callers rely on:

- `put(metrics, controller)` returns True once the result is held (it
  waits while another is); False if the mailbox is closed, after which
  `controller` is being aborted.
- `get()` returns the held result, waiting for one, and after `close`
  every result put before it, then None.
- `close(abort)` is final; with `abort` the controller of the last result
  put is aborted too. Each controller is aborted at most once.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any

import ray
from ray.actor import ActorHandle

logger = logging.getLogger(__name__)


class TrainMailbox:
    """One result at a time from a Train controller to its trial (module doc)."""

    def __init__(self) -> None:
        self._results: collections.deque[dict[str, Any]] = collections.deque()
        self._changed = asyncio.Condition()
        self._closed = False
        self._controller: ActorHandle[Any] | None = None  # the last one that put a result
        self._aborted: list[ActorHandle[Any]] = []
        self._aborts: set[asyncio.Task[None]] = set()  # held until done

    async def put(self, metrics: dict[str, Any], controller: ActorHandle[Any]) -> bool:
        async with self._changed:
            await self._changed.wait_for(lambda: self._closed or not self._results)
            if self._closed:
                self._abort(controller)
                return False
            self._controller = controller
            self._results.append(metrics)
            self._changed.notify_all()
            return True

    async def get(self) -> dict[str, Any] | None:
        async with self._changed:
            await self._changed.wait_for(lambda: self._closed or bool(self._results))
            if not self._results:
                return None
            result = self._results.popleft()
            self._changed.notify_all()
            return result

    async def close(self, abort: bool) -> None:
        async with self._changed:
            self._closed = True
            self._changed.notify_all()
            if abort and self._controller is not None:
                self._abort(self._controller)

    def _abort(self, controller: ActorHandle[Any]) -> None:
        """Ask `controller` to abort its run, once, without waiting for it."""
        if controller in self._aborted:
            return
        self._aborted.append(controller)
        task = asyncio.get_running_loop().create_task(_abort(controller))
        self._aborts.add(task)
        task.add_done_callback(self._aborts.discard)


async def _abort(controller: ActorHandle[Any]) -> None:
    """Ray Train's graceful abort; the controller exits as it ends, so the
    call's own answer is an actor error, which is what success looks like."""
    try:
        await controller.abort.remote()
    except ray.exceptions.RayActorError:
        pass
    except Exception:  # a run that cannot be aborted still ends with its trial's actor
        logger.exception("Aborting a Ray Train run for a stopped trial failed")


Mailbox = ray.remote(num_cpus=0)(TrainMailbox)
"""The mailbox as a Ray actor (no CPU: it only waits), as Ray's queue is."""
