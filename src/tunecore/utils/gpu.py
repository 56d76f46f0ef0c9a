"""`wait_for_gpu`: Ray Tune's wait, at the start of a trial, until the GPU
it was given has been freed by the trial that had it before (a GPU's memory
is released some seconds after its process ends)."""

from __future__ import annotations

import importlib
import logging
import time
from typing import Any

logger = logging.getLogger(__name__)


def wait_for_gpu(
    gpu_id: int | str | None = None,
    target_util: float = 0.01,
    retry: int = 20,
    delay_s: float = 5,
    gpu_memory_limit: float | None = None,
) -> bool:
    """Block until the memory use of GPU `gpu_id` (default: the first GPU
    Ray gave this worker) is at most `target_util` (a fraction), checking
    `retry` times `delay_s` seconds apart, as Ray's does. `gpu_id` is the
    GPU's index (an int, or a string of digits) or its UUID. Needs GPUtil
    (`pip install gputil`). Returns True; raises RuntimeError if the memory
    was not freed in time, ValueError for an unknown `gpu_id`."""
    if gpu_memory_limit is not None:
        raise ValueError(
            f"gpu_memory_limit={gpu_memory_limit!r}: Ray has removed it; give target_util, "
            "the fraction of memory in use to wait for"
        )
    gputil = _gputil()
    if gpu_id is None:
        gpu_id = _first_assigned_gpu()
    given: object = gpu_id  # a script may pass anything
    if isinstance(given, bool) or not isinstance(given, int | str):
        raise ValueError(f"gpu_id={given!r} ({type(given).__name__}) must be an int or a str")
    attribute = "id"
    if isinstance(gpu_id, str):
        if gpu_id.isdigit():
            gpu_id = int(gpu_id)
        else:
            attribute = "uuid"

    known = {getattr(gpu, attribute) for gpu in gputil.getGPUs()}
    if gpu_id not in known:
        raise ValueError(
            f"gpu_id={gpu_id!r} is not one of the GPUs found: {sorted(map(str, known))}; "
            "give a GPU's index (0, '0') or its UUID ('GPU-04546190-...')"
        )
    for _ in range(int(retry)):
        gpu = next(g for g in gputil.getGPUs() if getattr(g, attribute) == gpu_id)
        if gpu.memoryUtil <= target_util:
            return True
        logger.info(
            "Waiting for GPU %s's memory use %.3f to reach %s", gpu_id, gpu.memoryUtil, target_util
        )
        time.sleep(delay_s)
    raise RuntimeError(
        f"GPU {gpu_id}'s memory was not freed to {target_util} in {retry} checks {delay_s} s apart"
    )


def _gputil() -> Any:
    try:
        return importlib.import_module("GPUtil")
    except ImportError:
        raise RuntimeError(
            "wait_for_gpu needs GPUtil to read GPU memory: pip install gputil"
        ) from None


def _first_assigned_gpu() -> int | str:
    import ray  # noqa: PLC0415 - only inside a worker, where Ray is loaded

    ids = ray.get_gpu_ids()
    if not ids:
        raise RuntimeError(
            "wait_for_gpu found no GPU given to this worker (ray.get_gpu_ids() is empty): "
            "request one with tune.with_resources(trainable, {'gpu': 1}), or pass gpu_id"
        )
    first: int | str = ids[0]
    return first
