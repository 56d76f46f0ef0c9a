"""The default executor: one Ray actor per running trial.

- Each actor is created with the trial's CPUs, GPUs, memory and custom
  resources and hosts one trial at a time (a `TrialHost`, in a `TrialActor`).
  A request made of bundles (`PlacementGroupFactory`) gets a Ray placement
  group: the actor runs in the first bundle, the others stay reserved for
  the tasks and actors the trial starts (they are captured into the group),
  and the group is removed with the actor. When a trial releases its
  actor, the actor is kept idle and handed to the next trial that asks for
  the same resources: starting a trial then costs one call instead of a
  new process (about 0.37 s here). Idle actors with other resources are
  ended before a new actor is created, so Ray always has room for it.
- An idle actor still holds its resources, so it is kept only while no new
  actor may be waiting for them. A freed actor is ended instead while some
  trial's new actor is not placed yet (its ASSIGN has not completed) and
  either the requests held do not pack onto the nodes (`packs`: bundle by
  bundle, per node, not by sums: two trials pinned to a one-CPU node would
  otherwise wait behind an idle actor there forever) or it has waited
  longer than the placement patience (Ray, not tunecore, picks the nodes,
  and may pick otherwise than `packs`; other Ray work holds resources too),
  and then the idle actors are ended too. The patience follows how long
  this run's actors took to start (`executors.patience`: twice the slowest
  recent start, at least 5 s, at most 60 s): Ray cannot tell an actor
  waiting for an idle one's resources from one slow to start, and a fixed
  patience on a loaded machine ended the idle actors at every start.
  Trials that fit keep reusing actors.
- Operations are actor method calls; `ray.wait` runs over the head
  operation of every trial, so per-trial order holds (see `base`). A
  training asked behind a save is sent only once the save has come back:
  Ray sends a call's reply after the call returns, and a worker that dies
  in the next step at once (`os._exit`, a crash in native code) would take
  the save's reply with it, losing a checkpoint that is complete on disk.
- A user error comes back as the trial's failure with its traceback; an
  actor that dies (killed, `os._exit`, a lost node) fails its trial the
  same way, and the actor is never reused.
- A trial stopped while its actor is in the user's code waits for the
  next `report()`; an actor that does not get there within the grace
  period (`StopGrace`: a trainable that blocks forever) is killed, so
  neither the time budget nor the next trial waits for it.
- Trials chained behind a trial (`Executor.start`'s `then`,
  `core.experiment.chains`) go with its training calls; its actor runs
  each as the one before returns, and what they produced waits here
  (`_ran_ahead`) until the core starts them. Whoever claims a chained
  trial first, its worker or this driver, runs it (`executors.claim`).
- `ray.init()` is called when Ray is not running: a local Ray by default,
  or the cluster at `address`.

Why one module of over 400 lines: placement, actor reuse, chains, the stop
grace and the completion of each operation all read and change the same
per-trial maps (`_actors`, `_ops`, `_releasing`, `_idle`); what is not Ray's
already lives in `executors.base` and `executors.host`, and which trial is
chained behind which in `executors.chain_book`.
"""

from __future__ import annotations

import functools
import itertools
import logging
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import ray
from ray.exceptions import RayActorError, RayError
from ray.util.placement_group import PlacementGroup, placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from tunecore.core.resources import packs
from tunecore.model import (
    ChainRan,
    CheckpointRef,
    ExperimentEvent,
    Horizon,
    JsonDict,
    Resources,
    ResultReported,
)
from tunecore.shell.executors.actor import TrialActor, packed
from tunecore.shell.executors.base import (
    ChainedStart,
    Operation,
    OrderedOperations,
    Pending,
    StopGrace,
    completion_event,
    in_training,
)
from tunecore.shell.executors.chain_book import ChainBook
from tunecore.shell.executors.claim import claim_start
from tunecore.shell.executors.host import (
    Batch,
    Started,
    TrainableFactory,
    function_returned,
)
from tunecore.shell.executors.patience import PlacementPatience
from tunecore.shell.executors.queued import HostCalls
from tunecore.shell.trainable.worker import TrialContext

logger = logging.getLogger(__name__)

# Ray's names for the amounts `Resources` has fields for.
_NAMED = {
    "CPU": "cpu",
    "GPU": "gpu",
    "memory": "memory",
    "object_store_memory": "object_store_memory",
}

_RemoteHost = ray.remote(TrialActor)

RUN_AHEAD_RESULTS = 256
RUN_AHEAD_S = 0.05
"""The run-ahead (`train(until=...)`, from the core's `run_ahead_until`:
up to the horizon every decision on a result is the trial's own stopping
criterion, which the worker checks): a worker trains on without waiting
for the driver's answers and sends its results in batches, up to this
many, or what it produced in this long, so a fast trainable pays one round
trip per batch and a slow one's results are not held back. No decision
lands late; what the driver decides for other reasons (the time budget, a
stop request, an error elsewhere with fail_fast) reaches the trial at its
next batch, the results in between dropped, as with the opt-in buffer."""

RELEASE_PATIENCE_S = 10.0
"""How long an actor that is not kept for reuse gets to finish releasing its
trial (a class trainable's `cleanup`, a mirrored trial's last uploads)
before it is killed."""

ResourcesKey = bytes


def _key(resources: Resources) -> ResourcesKey:
    return msgspec.json.encode(resources, order="deterministic")


def _from_ray(amounts: dict[str, float]) -> Resources:
    """Ray's resource dict (a node's, the cluster's) as `Resources`,
    without Ray's bookkeeping entries (`node:...`, `accelerator_type:...`)."""
    named = {_NAMED[name]: float(v) for name, v in amounts.items() if name in _NAMED}
    custom = {
        name: float(amount)
        for name, amount in amounts.items()
        if name not in _NAMED and not name.startswith(("node:", "accelerator_type:"))
    }
    return Resources(
        cpu=named.get("cpu", 0.0),
        gpu=named.get("gpu", 0.0),
        memory=named.get("memory", 0.0),
        object_store_memory=named.get("object_store_memory", 0.0),
        custom=custom,
    )


def _to_ray(bundle: Resources) -> dict[str, float]:
    """A bundle as Ray's placement group takes it (no zero entries; no
    object store memory, see `_actor_options`)."""
    amounts = {"CPU": bundle.cpu, "GPU": bundle.gpu, "memory": bundle.memory, **bundle.custom}
    return {name: amount for name, amount in amounts.items() if amount}


def _actor_options(head: Resources) -> dict[str, Any]:
    """Ray's actor options for what the trial's worker asks. Object store
    memory is counted by the core but not reserved in Ray: Ray deprecates
    reserving it (it never limited the store) and its raylet aborts when
    such a reservation is given back (Ray 2.60)."""
    options: dict[str, Any] = {"num_cpus": head.cpu, "num_gpus": head.gpu}
    if head.memory:
        options["memory"] = int(head.memory)  # Ray takes whole bytes
    if head.custom:
        options["resources"] = dict(head.custom)
    return options


def ensure_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Start a local Ray, or join the cluster at `address`, unless Ray is up."""
    if ray.is_initialized():
        return
    ray.init(
        address=address,
        num_cpus=num_cpus if address is None else None,
        include_dashboard=False,
        log_to_driver=True,
        configure_logging=False,
    )


class RayExecutor(HostCalls):
    """See the module docstring."""

    _GIVEN_UP = "killed"

    def __init__(
        self,
        factory: TrainableFactory,
        *,
        address: str | None = None,
        reuse_actors: bool = True,
        result_buffer_length: int = 1,
    ) -> None:
        ensure_ray(address)
        self._factory = factory
        self._reuse = reuse_actors
        self._buffer = result_buffer_length
        self._credits: dict[str, int] = {}  # results a batch delivered ahead
        self._ops: OrderedOperations[ray.ObjectRef[Any]] = OrderedOperations()
        self._actors: dict[str, Any] = {}
        self._idle: dict[ResourcesKey, list[Any]] = {}
        self._releasing: set[str] = set()
        self._grace = StopGrace()
        # New actors that may wait for resources live actors still hold (a
        # paused trial finishing its save): while one waits, a released
        # actor is ended, not kept idle, or the two could wait forever.
        self._starved: set[str] = set()
        self._placing = PlacementPatience()  # new actors not placed yet
        self._asks: dict[str, Resources] = {}  # what each live actor holds
        # Actors on their way out: the ref of their last call (a release,
        # which uploads a mirrored trial's files) and when to stop waiting.
        self._ending: list[tuple[ray.ObjectRef[Any], Any, float]] = []
        self._total: Resources | None = None
        self._memory: dict[str, object] = {}  # memory checkpoints: refs in the object store
        self._memory_keys = itertools.count()
        self._groups: dict[Any, PlacementGroup] = {}  # actor -> the group it runs in
        # Idle actors whose last trial is not released yet: the release is
        # sent at the next loop turn, unless a new trial takes the actor
        # first (its assign releases the last trial: one call less).
        self._unreleased: set[Any] = set()
        self._failed: set[str] = set()  # trials whose worker failed, until started again
        # Trainings issued behind a pending save, sent once it completes
        # (`Executor.save`): a reply Ray is still sending when the worker
        # dies in the next step is lost with the process.
        self._after_save: dict[str, Horizon | None] = {}
        # Chained starts (`Executor.start`): the trials sent behind each
        # trial's call, what those that ran produced, the actors their
        # unfinished last ones hold, and events ready without a wait (the
        # adopted trials', the ends of chains no call brought back).
        self._chains = ChainBook()
        self._awaited: dict[str, tuple[Resources, JsonDict, TrialContext]] = {}
        self._ran_ahead: dict[str, _RanAhead] = {}
        self._handed: dict[Any, str] = {}
        self._ready_events: list[ExperimentEvent] = []

    def cluster_resources(self) -> Resources:
        """The alive nodes, as bundles (their sum is the total): a bundle
        no node can hold then never fits."""
        alive = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
        nodes = [_from_ray(node["Resources"]) for node in alive]
        if nodes:
            return Resources(bundles=tuple(nodes))
        # Ray leaves this one function unannotated; it returns name -> amount.
        total: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        return _from_ray(total)

    # -- operations -----------------------------------------------------------

    def _issue(
        self,
        trial_id: str,
        operation: Operation,
        call: Callable[[Any], ray.ObjectRef[Any]],
        **details: Any,
    ) -> None:
        actor = self._actors.get(trial_id)
        if actor is None:
            if trial_id in self._failed:
                # A batch's results came with the error that ended it: the
                # core answers those results before it hears the failure.
                return
            raise KeyError(f"trial {trial_id} has no worker")
        self._ops.push(trial_id, Pending(operation, call(actor), **details))

    def start(
        self,
        trial_id: str,
        resources: Resources,
        config: JsonDict,
        context: TrialContext,
        restore: CheckpointRef | None,
        *,
        then: Sequence[ChainedStart] = (),
    ) -> None:
        """A chained trial that ran ahead reports what it produced (see
        `Executor.start`); one a worker may still run ahead is taken from
        its chain by the driver's start claim (`executors.claim`), or
        waited for when the worker's claim came first."""
        self._releasing.discard(trial_id)
        self._failed.discard(trial_id)
        ran = self._ran_ahead.pop(trial_id, None)
        if ran is not None:
            self._adopt(trial_id, resources, ran)
            return
        holder = self._chains.holder(trial_id)
        if holder is not None:  # a worker may still run it ahead: the claim decides
            if not claim_start(context):  # the worker's: it ran it, or will say it did not
                self._awaited[trial_id] = (resources, config, context)
                return
            self._chains.cut(holder, trial_id)
        actor = self._actors[trial_id] = self._actor_for(trial_id, resources)
        self._asks[trial_id] = resources
        self._chains.keep(trial_id, then)
        if restore is None and trial_id not in self._placing:
            # A reused actor is placed already: its first results can come
            # back with the assignment, in one round trip.
            batch = self._call_batch(context.until)
            payload = packed(
                config, context, batch, self._chains.as_sent(trial_id, self._call_batch)
            )
            handle = actor.assign_and_train_packed.remote(payload)
            self._ops.push(trial_id, Pending(Operation.ASSIGN_AND_TRAIN, handle))
            return
        assign = functools.partial(
            self._issue,
            trial_id,
            Operation.ASSIGN,
            lambda a: a.call.remote("assign", config, context),
        )
        self._begin(trial_id, assign, restore, context.until)

    def _ran(self, trial_id: str, reply: Started | None) -> list[ExperimentEvent]:
        """Keep what the trials chained behind `trial_id` produced (the
        reply of a call that ran the chain, or None), until the core starts
        each; one the core started meanwhile (`_awaited`) is adopted now.
        The last one that ran keeps the actor when its function did not
        return (it still trains, or failed there): the actor waits for that
        trial's start instead of going idle. Once the chain is done with,
        `ChainRan` tells the core which ran: the others are in no worker's
        hands and start as any waiting trial."""
        if reply is None and not self._chains.holds_any(trial_id, self._awaited):
            return []  # the chain goes with the next call
        actor = self._actors.get(trial_id)
        ran: list[str] = []
        for start in self._chains.take(trial_id):
            if reply is None:
                self._start_awaited(start.trial_id)
                continue
            location, results, error, reply = reply
            holder = None if function_returned(results, error) else actor
            produced = _RanAhead(location, results, error, holder)
            if holder is not None:
                self._handed[holder] = start.trial_id
            ran.append(start.trial_id)
            awaited = self._awaited.pop(start.trial_id, None)
            if awaited is None:
                self._ran_ahead[start.trial_id] = produced
            else:
                self._adopt(start.trial_id, awaited[0], produced)
        return [ChainRan(trial_id=trial_id, at=time.time(), ran=tuple(ran))]

    def _start_awaited(self, trial_id: str) -> None:
        """Start a trial the core started while a worker might have run it
        ahead, and which it did not: as any other."""
        awaited = self._awaited.pop(trial_id, None)
        if awaited is not None:
            resources, config, context = awaited
            self.start(trial_id, resources, config, context, None)

    def _adopt(self, trial_id: str, resources: Resources, ran: _RanAhead) -> None:
        """The start of a trial that ran ahead: its events are ready."""
        if ran.actor is not None:
            del self._handed[ran.actor]
            self._actors[trial_id] = ran.actor
            self._asks[trial_id] = resources
        self._ready_events.append(self._started(trial_id, ran.location))
        self._ready_events.extend(self._batch(trial_id, (ran.results, ran.error)))

    def next_events(self, timeout: float) -> list[ExperimentEvent]:
        """What adopted trials reported first, without waiting."""
        if self._ready_events:
            events, self._ready_events = self._ready_events, []
            return events
        return super().next_events(timeout)

    def _call_batch(self, until: Horizon | None) -> Batch:
        """The batch of a call that must train: `_batch_of`'s, or one result."""
        return self._batch_of(until) or (1, None, None)

    def _batch_of(self, until: Horizon | None) -> tuple[int, float | None, Horizon | None] | None:
        """`train_many`'s (results, seconds, horizon) for a call: the
        run-ahead's when the core allows it (its batches are larger than a
        buffer's and no decision lands late, so it wins over the buffer
        too), else the user's buffer (no time bound, no horizon), or None:
        one result."""
        if until is not None:
            return max(RUN_AHEAD_RESULTS, self._buffer), RUN_AHEAD_S, until
        if self._buffer > 1:
            return self._buffer, None, None
        return None

    def _actor_for(self, trial_id: str, resources: Resources) -> Any:
        idle = self._idle.get(_key(resources))
        if idle:
            actor = idle.pop()
            self._unreleased.discard(actor)  # its next assign releases the last trial
            return actor
        if self._reuse:
            released = self._take_over_released(resources)
            if released is not None:
                return released
        self._end_idle()  # make room: idle actors hold resources
        if self._total is None:
            self._total = self.cluster_resources()
        if not packs([*self._asks.values(), resources], self._total):
            self._starved.add(trial_id)
        self._placing.created(trial_id, time.monotonic())
        if not resources.bundles:
            options = _actor_options(resources)
            return _RemoteHost.options(**options, max_concurrency=1).remote(self._factory)
        head = resources.bundles[0]
        group = placement_group(
            [_to_ray(b) for b in resources.bundles if _to_ray(b)], strategy=resources.strategy
        )
        strategy = PlacementGroupSchedulingStrategy(
            placement_group=group,
            placement_group_bundle_index=0 if _to_ray(head) else -1,
            placement_group_capture_child_tasks=True,
        )
        actor = _RemoteHost.options(
            **_actor_options(head), scheduling_strategy=strategy, max_concurrency=1
        ).remote(self._factory)
        self._groups[actor] = group
        return actor

    def _take_over_released(self, resources: Resources) -> Any | None:
        """The actor of a trial released while its last operation (the save
        taken as it stopped, say) is still running, if it has the same
        resources: the new trial's calls queue behind that operation on
        the same actor, instead of a new process that would start later
        and, while the old one still holds its resources, starve."""
        key = _key(resources)
        for trial_id in sorted(self._releasing):
            asked = self._asks.get(trial_id)
            if asked is None or _key(asked) != key or in_training(self._ops, trial_id):
                continue  # a step may never end: queueing behind it could wait forever
            if self._hosts_a_chained_trial(self._actors[trial_id], besides=trial_id):
                continue
            actor, _ = self._detach(trial_id)
            actor.call.remote("release")
            return actor
        return None

    def _hosts_a_chained_trial(self, actor: Any, besides: str | None = None) -> bool:
        """Whether a trial chained behind another runs on `actor` now
        (started, or waiting for its start): the actor is not free when
        that other trial leaves it."""
        if actor in self._handed:
            return True
        return any(held is actor and t != besides for t, held in self._actors.items())

    def _end(self, actor: Any) -> None:
        """Kill the actor and give back its placement group, if any."""
        ray.kill(actor)
        self._placing.freed(time.monotonic())
        group = self._groups.pop(actor, None)
        if group is not None:
            remove_placement_group(group)

    def _end_idle(self) -> None:
        self._send_releases()  # a mirrored trial's last uploads, before the kill
        for idle in self._idle.values():
            for actor in idle:
                self._end(actor)
        self._idle.clear()

    def _send_releases(self) -> None:
        """Release the last trial of every idle actor that has not been."""
        for actor in self._unreleased:
            actor.call.remote("release")
        self._unreleased.clear()

    def _call(
        self, trial_id: str, operation: Operation, method: str, *args: object, **details: object
    ) -> None:
        self._issue(trial_id, operation, lambda a: a.call.remote(method, *args), **details)

    def _holds(self, trial_id: str) -> bool:
        return trial_id in self._actors

    def train(self, trial_id: str, until: Horizon | None = None) -> None:
        """With a result buffer or the run-ahead, one call produces several
        results; the ContinueTrial commands for the results already produced
        are absorbed here instead of reaching the worker."""
        credits = self._credits.get(trial_id, 0)
        if credits > 0:
            self._credits[trial_id] = credits - 1
            return
        if self._ops.saving(trial_id):
            self._after_save[trial_id] = until
            return
        self._send_train(trial_id, until)

    def _send_train(self, trial_id: str, until: Horizon | None) -> None:
        batch = self._batch_of(until)
        if batch is None:
            self._issue(trial_id, Operation.TRAIN, lambda a: a.call.remote("train"))
            return
        payload = packed(batch, self._chains.as_sent(trial_id, self._call_batch))
        self._issue(trial_id, Operation.TRAIN_MANY, lambda a: a.train_many_packed.remote(payload))

    def _detach(self, trial_id: str) -> tuple[Any, Resources | None]:
        """Forget that `trial_id` holds an actor: the actor and what it asked."""
        self._releasing.discard(trial_id)
        self._starved.discard(trial_id)
        self._placing.forget(trial_id)
        self._credits.pop(trial_id, None)
        self._after_save.pop(trial_id, None)
        self._chains.take(trial_id)
        return self._actors.pop(trial_id, None), self._asks.pop(trial_id, None)

    def _free(self, trial_id: str, *, reusable: bool, stuck: bool = False) -> None:
        """Take the trial's actor back. The trials chained behind it were
        not run (or died with its actor): one the core started meanwhile
        (`_awaited`) starts as any other, and the core hears that none ran."""
        chain = self._chains.chained_behind(trial_id)
        self._give_back(trial_id, reusable=reusable, stuck=stuck)
        for chained_id in chain:
            self._start_awaited(chained_id)
        if chain:
            self._ready_events.append(ChainRan(trial_id=trial_id, at=time.time()))

    def _give_back(self, trial_id: str, *, reusable: bool, stuck: bool) -> None:
        actor, asked = self._detach(trial_id)
        if actor is None or asked is None:
            return
        if self._hosts_a_chained_trial(actor):
            return
        if reusable and self._reuse and not self._starved:
            self._unreleased.add(actor)
            self._idle.setdefault(_key(asked), []).append(actor)
        elif not stuck:
            # A trial that ended, or failed in the user's code: its release
            # (the trainable's cleanup, as Ray's stop after a failure) runs
            # first; a dead actor's call fails at once.
            deadline = time.monotonic() + RELEASE_PATIENCE_S
            self._ending.append((actor.call.remote("release"), actor, deadline))
        else:
            self._end(actor)

    def _reap(self, wait: float = 0.0) -> None:
        """End the actors whose release has returned, or waited too long
        for (up to `wait` seconds for the rest)."""
        if not self._ending:
            return
        refs = [ref for ref, _, _ in self._ending]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=wait)
        done, now = set(ready), time.monotonic()
        left = []
        for ref, actor, deadline in self._ending:
            if ref in done or now >= deadline:
                self._end(actor)
            else:
                left.append((ref, actor, deadline))
        self._ending = left

    # -- completions ------------------------------------------------------------

    def _tend(self, now: float) -> None:
        self._send_releases()
        self._reap()
        self._lose_patience(now)

    def _ready(self, handles: list[Any], timeout: float) -> list[Any]:
        """One `ray.wait` for the first: a second, non-blocking one to gather
        more costs as much driver CPU as the loop turn it would save."""
        ready, _ = ray.wait(handles, num_returns=1, timeout=timeout)
        return ready

    def _wait_unqueued(self, timeout: float) -> None:
        time.sleep(timeout)

    def _outcome(self, handle: Any) -> tuple[object, str | None]:
        try:
            return ray.get(handle), None
        except RayError as error:  # the user's exception, or the actor died
            return None, _describe(error)

    def _lose_patience(self, now: float) -> None:
        """New actors waiting too long to be placed (`PlacementPatience`)
        count as starved, and the idle actors, which may hold what they
        wait for, are ended."""
        waited = self._placing.overdue(now)
        if waited - self._starved:
            self._starved |= waited
            self._end_idle()

    def _events(self, trial_id: str, pending: Pending[Any], value: object) -> list[ExperimentEvent]:
        """Also: a batch of results (a buffered or run-ahead call, an
        assignment that came back with results), the placement an
        assignment proves, and the training held back behind a save."""
        if pending.operation is Operation.ASSIGN:
            self._starved.discard(trial_id)
            self._placing.placed(trial_id, time.monotonic())
        if pending.operation is Operation.TRAIN_MANY:
            assert isinstance(value, bytes)  # TrialActor.train_many_packed's
            results, error, chained = pickle.loads(value)
            events = [*self._ran(trial_id, chained), *self._batch(trial_id, (results, error))]
        elif pending.operation is Operation.ASSIGN_AND_TRAIN:
            assert isinstance(value, bytes)  # TrialActor.assign_and_train_packed's
            location, results, error, chained = pickle.loads(value)
            chain = self._ran(trial_id, chained)
            events = [
                self._started(trial_id, location),
                *chain,
                *self._batch(trial_id, (results, error)),
            ]
        else:
            events = super()._events(trial_id, pending, value)
        if trial_id in self._after_save and not self._ops.saving(trial_id):
            self._send_train(trial_id, self._after_save.pop(trial_id))
        return events

    def _kept(self, pending: Pending[Any], value: object) -> object:
        """The object, not the bytes: a resume hands the ref to the next
        actor, which reads it from the object store."""
        del value
        return pending.handle

    def _started(self, trial_id: str, location: object) -> ExperimentEvent:
        """The `TrialStarted` of an assignment that came back with results."""
        event = completion_event(trial_id, Pending(Operation.ASSIGN, None), location, time.time())
        assert event is not None  # an assignment always becomes TrialStarted
        return event

    def _batch(self, trial_id: str, value: object) -> list[ExperimentEvent]:
        """The results of one buffered call, in order, then its error."""
        assert isinstance(value, tuple)  # TrialHost.train_many's (results, error)
        results: list[JsonDict] = value[0]
        error: str | None = value[1]
        now = time.time()
        events: list[ExperimentEvent] = [
            ResultReported(trial_id=trial_id, at=now, result=result) for result in results
        ]
        self._credits[trial_id] = max(len(results) - 1, 0)
        if error is not None:
            events.append(self._lose(trial_id, error))
        return events

    def _lose(self, trial_id: str, error: str) -> ExperimentEvent:
        """Also remembered until the trial starts again: the core answers
        the results a failed batch delivered before it hears the failure."""
        self._failed.add(trial_id)
        return super()._lose(trial_id, error)

    def shutdown(self) -> None:
        """End every actor. Idle ones and those on their way out first get
        to finish their release (a mirrored trial's uploads), within
        `RELEASE_PATIENCE_S`; actors still hosting a trial are killed."""
        deadline = time.monotonic() + RELEASE_PATIENCE_S
        self._send_releases()
        for idle in self._idle.values():
            # Queued behind the release each got when it went idle.
            self._ending.extend((actor.call.remote("location"), actor, deadline) for actor in idle)
        self._idle.clear()
        self._reap(wait=RELEASE_PATIENCE_S)
        for _, actor, _ in self._ending:
            self._end(actor)
        self._ending.clear()
        for actor in [*self._actors.values(), *self._handed]:
            self._end(actor)
        self._actors.clear()
        self._handed.clear()
        self._ran_ahead.clear()  # chained trials the core never started
        self._chains.clear()
        self._awaited.clear()
        self._ready_events.clear()
        self._memory.clear()
        self._ops = OrderedOperations()


@dataclass(frozen=True)
class _RanAhead:
    """What a chained trial produced before the core started it, and the
    actor it still holds (None when its function returned)."""

    location: object
    results: list[JsonDict]
    error: str | None
    actor: Any | None


def _describe(error: BaseException) -> str:
    if isinstance(error, RayActorError):
        return f"The worker running the trial died: {error}"
    return str(error)
