"""One local Ray for the whole session, with 2 CPUs (the machine's size),
started by the first test that asks for it; and Ctrl-C as a terminal
delivers it."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import cloudpickle
import pytest

from tests.integration import trainables

pytest_plugins = ["tests.storage_fixtures"]

# A suite started in the background by a shell without job control (`cmd &`
# in a script) inherits SIGINT ignored, and Python then never raises
# KeyboardInterrupt, nor do the scripts it starts. The tests of Ctrl-C need
# it as a terminal gives it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    import ray  # noqa: PLC0415 - only the integration tests need Ray

    temp = Path(os.environ.get("RAY_TMPDIR") or tempfile.gettempdir()).resolve()
    if temp.is_relative_to(Path(sys.prefix).resolve()):
        pytest.fail(
            f"the temporary directory {temp} lies inside the virtualenv {sys.prefix}: "
            "Ray's workers refuse to start there and ray.init would wait for them forever"
        )

    # Ray workers do not have the tests on their path: ship the test
    # trainables by value, as a user's script in __main__ would be.
    cloudpickle.register_pickle_by_value(trainables)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
