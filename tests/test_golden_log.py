"""A log written by an old tunecore must keep loading in every later one
(msgspec schema evolution: new fields get defaults). `tests/golden/log_v1`
was written once by `tests/golden/make_golden_log.py`, `log_v1_pbt` (PBT's
exploits, drawn values, resources from the config, a stopper's verdicts)
by `make_golden_log_pbt.py`, `log_v1_end_stoppers` (function trainables
ending under stateful stoppers, before the stoppers heard such an end) by
`make_golden_log_end_stoppers.py`; none is ever rewritten, and each one's
`expected.json` holds what replaying it gave then."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import tunecore
from tests.golden.make_golden_log_end_stoppers import stopper_summary
from tunecore.model import ResultReported
from tunecore.shell.eventlog import read_log
from tunecore.shell.journal import digested

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("version", sorted(p.name for p in GOLDEN.glob("log_v*")))
def test_an_old_log_replays_to_what_it_replayed_to_when_written(
    version: str, tmp_path: Path
) -> None:
    directory = tmp_path / "golden"
    shutil.copytree(GOLDEN / version, directory)
    expected = json.loads((directory / "expected.json").read_text())
    replayed = tunecore.replay(directory)
    assert replayed.snapshots_verified >= 1  # old snapshots decode and agree
    assert replayed.records == expected["records"]
    # The commands the core decided then; its requests (`DrawValues`,
    # `AskSearcher`) became commands later, and the digest leaves them out.
    assert len(digested([command for _, command in replayed.commands])) == expected["commands"]
    trials = replayed.state.trials.values()
    assert sorted(t.status.value for t in trials) == expected["statuses"]
    iterations = sorted(int(str(t.last_result["training_iteration"])) for t in trials)
    assert iterations == expected["iterations"]
    events = read_log(directory).events
    kinds = {type(event).__name__ for event in events}
    wanted = expected.get(
        "kinds", ["ResultReported", "CheckpointSaved", "TrialFailed", "ExperimentResumed"]
    )
    assert set(wanted) <= kinds
    stopped_by = [e for e in events if isinstance(e, ResultReported) and e.stopped_by]
    assert len(stopped_by) == expected.get("stopped_by", 0)
    if "stopper" in expected:  # what the stoppers counted is what they counted then
        assert stopper_summary(replayed.state) == expected["stopper"]
