"""A TPU slice as Ray Train V2 reads it from a `ScalingConfig`'s `topology`
and `accelerator_type`: how many logical TPUs it holds, how many one host
of it holds (what a worker asks for unless told), and so how many workers
of a given size fill it.

Ray 2.60 computes this in `ray.util.tpu.get_tpu_worker_resources`, which
the older Rays tunecore runs on lack; this is the same arithmetic
(tests/api/test_scaling_config_vs_ray_train.py compares the two), so a
config tunecore accepts is one Ray Train accepts, with the same
`resources_per_worker`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from math import prod

RESOURCE_PER_CHIP_VARIABLE = "RAY_TPU_RESOURCE_PER_CHIP"
"""Ray's environment variable: logical TPU resources per physical chip (1
unless set; v7x exposes 2 devices a chip)."""

TPU_VERSIONS = ("v2", "v3", "v4", "v5p", "v5litepod", "v6e", "v7x")
"""The TPU generations Ray knows (`VALID_TPU_TYPES`)."""

CHIPS_PER_HOST = 4
"""Chips on one host of a multi-host slice, for every generation."""

EIGHT_CHIP_HOST_VERSIONS = ("v5litepod", "v6e")
SINGLE_HOST_TOPOLOGIES = ("1x1", "2x2", "2x4")
"""A single-host slice of these generations is one host with all its chips."""


@dataclass(frozen=True)
class TpuSlice:
    """One slice of `topology` on `accelerator_type`, in logical TPUs."""

    topology: str
    tpus: int
    tpus_per_host: int

    @classmethod
    def of(cls, topology: str, accelerator_type: str) -> TpuSlice:
        """The slice Ray Train reserves for these two fields; a `ValueError`
        naming both if either cannot be read."""
        try:
            per_chip = _resource_per_chip()
            version = tpu_version(accelerator_type)
            shape = topology.strip().lower()
            chips = prod(int(side) for side in shape.split("x"))
        except ValueError as error:
            raise ValueError(
                f"ScalingConfig: cannot read a TPU slice from topology={topology!r} and "
                f"accelerator_type={accelerator_type!r}: {error}"
            ) from None
        single_host = version in EIGHT_CHIP_HOST_VERSIONS and shape in SINGLE_HOST_TOPOLOGIES
        per_host = chips if single_host else CHIPS_PER_HOST
        return cls(topology, chips * per_chip, per_host * per_chip)

    @property
    def default_worker(self) -> dict[str, float]:
        """What a worker asks for when `resources_per_worker` is not given:
        one CPU and one host's TPUs."""
        return {"CPU": 1, "TPU": self.tpus_per_host}

    def workers(self, tpus_per_worker: float) -> int:
        """How many workers of `tpus_per_worker` TPUs fill the slice; a
        `ValueError` if they cannot fill it evenly."""
        if tpus_per_worker <= 0 or self.tpus % tpus_per_worker != 0:
            raise ValueError(
                f"ScalingConfig: resources_per_worker's TPU={tpus_per_worker} does not divide "
                f"the {self.tpus} TPUs of a slice of topology={self.topology!r} evenly; ask "
                "for a positive divisor of it"
            )
        return int(self.tpus // tpus_per_worker)


def tpu_version(accelerator_type: str) -> str:
    """The generation `accelerator_type` names, as Ray reads it:
    `"TPU-V6E"`, `"tpu-v6e"` and `"v6e"` are `"v6e"`."""
    lowered = accelerator_type.lower()
    if lowered.startswith("tpu-"):
        version = lowered.replace("tpu-", "")
    elif lowered.startswith("tpu"):
        version = lowered.replace("tpu", "v")
    else:
        version = lowered
    if version not in TPU_VERSIONS:
        raise ValueError(
            f"accelerator_type={accelerator_type!r} names no TPU generation: expected one of "
            f"{list(TPU_VERSIONS)}, or 'TPU-' followed by one"
        )
    return version


def _resource_per_chip() -> int:
    """`RAY_TPU_RESOURCE_PER_CHIP`, 1 unless set."""
    value = os.environ.get(RESOURCE_PER_CHIP_VARIABLE)
    if value is None:
        return 1
    if not value.isdecimal() or int(value) < 1:
        raise ValueError(f"{RESOURCE_PER_CHIP_VARIABLE}={value!r} must be a positive integer")
    return int(value)
