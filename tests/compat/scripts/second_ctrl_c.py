# mypy: ignore-errors
# timeout: 480
"""A second Ctrl-C, or the first with `TUNE_DISABLE_SIGINT_HANDLER=1`,
raises `KeyboardInterrupt` from `fit()`; `Tuner.restore` goes on after it.

Ray Tune's `tune.run` (`_setup_signal_catching`) catches the first SIGINT
to end the run and save its state ("Press CTRL+C ... to skip"), putting
the handler it found back, so the next one raises where the driver is;
with `TUNE_DISABLE_SIGINT_HANDLER=1` it installs none and the first one
raises. The run as a user starts it from a terminal, pressing Ctrl-C
while the experiment ends (a callback's `on_experiment_end` that takes
long), then resuming it as the fault-tolerance guide does
(tune/tutorials/tune-fault-tolerance.rst).
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

import tunecore as tune

STEPS = 20
INTERRUPTED = 42


def trainable(config):
    for step in range(1, STEPS + 1):
        tune.report({"step": step})
        if step == 2:
            open(os.path.join(config["signals"], "reported"), "w").close()
        time.sleep(0.05)


class SlowEnd(tune.Callback):
    """Takes its time at the end, as a logger uploading its files does."""

    def __init__(self, signals):
        self.signals = signals

    def on_experiment_end(self, trials, **info):
        open(os.path.join(self.signals, "ending"), "w").close()
        for _ in range(600):  # a minute at most: the second Ctrl-C cuts it short
            time.sleep(0.1)


def first_run(signals, storage_path):
    """The run a user starts and interrupts; exits INTERRUPTED when `fit()` raises."""
    tuner = tune.Tuner(
        trainable,
        param_space={"signals": signals},
        run_config=tune.RunConfig(
            storage_path=storage_path, name="interrupted", callbacks=[SlowEnd(signals)]
        ),
    )
    try:
        tuner.fit()
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED)
    sys.exit(0)


if len(sys.argv) == 4 and sys.argv[1] == "--first-run":
    first_run(sys.argv[2], sys.argv[3])


def wait_for(path, process):
    deadline = time.monotonic() + 300
    while not os.path.exists(path):
        assert process.poll() is None, f"the run ended before {path} was written"
        assert time.monotonic() < deadline, f"no {path} within five minutes"
        time.sleep(0.05)


def interrupt(presses, environ):
    """Start the first run, press Ctrl-C at each file of `presses` as it
    appears, and return its exit code and experiment path."""
    signals = tempfile.mkdtemp()
    storage_path = tempfile.mkdtemp()
    run = subprocess.Popen(
        [sys.executable, __file__, "--first-run", signals, storage_path],
        env={**os.environ, **environ},
    )
    for name in presses:
        wait_for(os.path.join(signals, name), run)
        run.send_signal(signal.SIGINT)
    return run.wait(timeout=300), os.path.join(storage_path, "interrupted")


def resumed(path):
    results = tune.Tuner.restore(path, trainable=trainable).fit()
    assert len(results) == 1 and not results.errors
    return results[0].metrics["step"]


# The second Ctrl-C, pressed while the experiment ends, raises from fit().
code, path = interrupt(["reported", "ending"], {})
assert code == INTERRUPTED, code
assert tune.Tuner.can_restore(path)
assert resumed(path) == STEPS

# With the handler disabled the first one does.
code, path = interrupt(["reported"], {"TUNE_DISABLE_SIGINT_HANDLER": "1"})
assert code == INTERRUPTED, code
assert tune.Tuner.can_restore(path)
assert resumed(path) == STEPS
