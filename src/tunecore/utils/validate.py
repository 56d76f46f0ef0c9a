"""`validate_save_restore`: Ray Tune's check that a `Trainable` subclass
resumes where it left off, for a test of your own before a long run."""

from __future__ import annotations

from typing import Any, cast

from tunecore.model import JsonDict
from tunecore.shell.trainable import Trainable

_TRAINED_FIRST = 3  # steps before the checkpoint, as in Ray


def validate_save_restore(
    trainable_cls: type[Trainable], config: JsonDict | None = None, num_gpus: float = 0
) -> bool:
    """Train an instance of `trainable_cls` for three steps on a Ray actor,
    save it, restore the checkpoint into a second actor and train that one
    twice: its results must count on from iteration 4. Returns True, or
    raises AssertionError saying where the count went wrong; an error the
    class raises (a `load_checkpoint` it lacks) comes out as Ray raises it,
    an instance of the class's own error type. Starts a local Ray if none
    is running. Both actors run on this node, since the checkpoint is
    handed over as a path."""
    # Ray's import is slow: only when validating, not with `tunecore.utils`.
    import ray  # noqa: PLC0415
    import ray.util.scheduling_strategies  # noqa: PLC0415

    from tunecore.shell.executors.ray import ensure_ray  # noqa: PLC0415

    ensure_ray()
    node = ray.get_runtime_context().get_node_id()
    placement = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(node, soft=False)
    # Ray's annotation lists only its other strategies; node affinity is one
    # too. Its handles' methods gain `.remote` only at run time: Any.
    remote: Any = ray.remote(num_gpus=num_gpus, scheduling_strategy=cast(Any, placement))
    actor_class: Any = remote(trainable_cls)
    first, second = actor_class.remote(config=config), actor_class.remote(config=config)
    try:
        for _ in range(_TRAINED_FIRST):
            ray.get(first.train.remote())
        ray.get(second.restore.remote(first.save.remote()))
        for expected in (_TRAINED_FIRST + 1, _TRAINED_FIRST + 2):
            result: JsonDict = ray.get(second.train.remote())
            if result.get("training_iteration") != expected:
                raise AssertionError(
                    f"{trainable_cls.__name__}: after a restore from iteration "
                    f"{_TRAINED_FIRST}, expected training_iteration {expected}, got "
                    f"{result.get('training_iteration')!r}"
                )
        for actor in (first, second):
            ray.get(actor.stop.remote())
    finally:
        for actor in (first, second):
            ray.kill(actor)
    return True
