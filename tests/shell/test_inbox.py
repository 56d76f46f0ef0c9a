"""The inbox trusts no entry: whatever sits in `<experiment dir>/inbox/`
is skipped with one warning unless it is a small, shallow JSON request in
a regular file, and a request posted beside it is still taken."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import JsonValue, StopRequested, TrialRequested
from tunecore.shell.inbox import MAX_DEPTH, MAX_REQUEST_BYTES, AddTrialRequest, Inbox

BAD = "00000000000000000000-1-000000.json"  # sorts before any posted request

STOP = b'{"type": "StopTrialRequest", "trial_id": "t_1"}'


def deep(levels: int) -> bytes:
    """An add request whose config holds lists nested `levels` deep."""
    return b'{"type": "AddTrialRequest", "config": {"a": %s}}' % (b"[" * levels + b"]" * levels)


def a_directory(path: Path) -> None:
    path.mkdir()
    (path / "inside.json").write_bytes(STOP)


def a_fifo(path: Path) -> None:
    os.mkfifo(path)  # opening it to read without O_NONBLOCK would hang


def a_link_to_dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")  # reading it whole would never end


def a_link_to_a_request(path: Path) -> None:
    target = path.parent.parent / "elsewhere.json"
    target.write_bytes(STOP)
    path.symlink_to(target)


def an_oversized_request(path: Path) -> None:
    padding = b"x" * MAX_REQUEST_BYTES
    path.write_bytes(b'{"type": "StopTrialRequest", "trial_id": "%s"}' % padding)


def json_nested_200000_deep(path: Path) -> None:
    path.write_bytes(deep(200_000))


def invalid_json(path: Path) -> None:
    path.write_bytes(b'{"type": StopTrialRequest}')


BAD_ENTRIES: dict[str, tuple[Callable[[Path], None], str]] = {
    "directory": (a_directory, "a directory, not a regular file"),
    "fifo": (a_fifo, "a FIFO, not a regular file"),
    "link to /dev/zero": (a_link_to_dev_zero, "a symbolic link, not a regular file"),
    "link to a request": (a_link_to_a_request, "a symbolic link, not a regular file"),
    "oversized": (an_oversized_request, f"larger than {MAX_REQUEST_BYTES} bytes"),
    "nested 200,000 deep": (json_nested_200000_deep, f"nested more than {MAX_DEPTH} deep"),
    "invalid JSON": (invalid_json, "JSON is malformed"),
}


@pytest.mark.parametrize(("make", "reason"), BAD_ENTRIES.values(), ids=BAD_ENTRIES.keys())
def test_a_bad_entry_is_skipped_once_with_a_warning_and_the_request_beside_it_taken(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    make: Callable[[Path], None],
    reason: str,
) -> None:
    inbox = Inbox(tmp_path / "exp")
    inbox.post(AddTrialRequest(config={"lr": 0.1}))
    bad = inbox.directory / BAD
    make(bad)
    with caplog.at_level(logging.WARNING):
        taken = inbox.take(at=1.0)
    assert [msgspec.structs.replace(e, request="") for e in taken] == [
        TrialRequested(config={"lr": 0.1}, at=1.0)
    ]
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert f"{bad}: skipped a request that cannot be read" in warning
    assert reason in warning
    assert not os.path.lexists(bad)  # neither this driver nor a resume meets it again
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert Inbox(tmp_path / "exp").take(at=2.0) == []
    assert caplog.records == []


def test_a_directory_is_moved_aside_whole_rather_than_deleted(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    inbox.directory.mkdir()
    a_directory(inbox.directory / "a.json")
    assert inbox.take(at=1.0) == []
    assert (inbox.directory / ".rejected-a.json" / "inside.json").read_bytes() == STOP


def test_an_entry_that_cannot_be_removed_is_warned_about_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = Inbox(tmp_path)
    inbox.directory.mkdir()
    a_directory(inbox.directory / "a.json")
    (inbox.directory / ".rejected-a.json").mkdir()
    (inbox.directory / ".rejected-a.json" / "taken").touch()  # so the rename fails
    with caplog.at_level(logging.WARNING):
        assert inbox.take(at=1.0) == []
        inbox.post(AddTrialRequest(config={"lr": 0.1}))
        [taken] = inbox.take(at=2.0)
        assert msgspec.structs.replace(taken, request="") == TrialRequested(
            config={"lr": 0.1}, at=2.0
        )
    assert len(caplog.records) == 1
    assert "could not remove it" in caplog.records[0].getMessage()


def test_requests_within_the_limits_are_taken(tmp_path: Path) -> None:
    inbox = Inbox(tmp_path)
    inbox.directory.mkdir()
    (inbox.directory / "1.json").write_bytes(deep(MAX_DEPTH - 2))  # request + config + lists
    brackets_in_a_string = "[{" * 10_000
    (inbox.directory / "2.json").write_bytes(
        b'{"type": "StopTrialRequest", "trial_id": "%s"}' % brackets_in_a_string.encode()
    )
    nested: JsonValue = []
    for _ in range(MAX_DEPTH - 3):
        nested = [nested]
    assert inbox.take(at=1.0) == [
        TrialRequested(config={"a": nested}, at=1.0, request="1.json"),
        StopRequested(trial_id=brackets_in_a_string, at=1.0, request="2.json"),
    ]


def test_a_driver_meeting_bad_entries_runs_on_and_takes_the_good_request(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inbox = Inbox(tmp_path / "exp")
    inbox.post(AddTrialRequest(config={"x": 2}))
    for number, (make, _) in enumerate(BAD_ENTRIES.values()):
        make(inbox.directory / f"{number:020d}-1-000000.json")

    def trainable(config: dict[str, int]) -> None:
        tunecore.report({"x": config["x"]})

    with caplog.at_level(logging.WARNING):
        results = Tuner(
            trainable,
            param_space={"x": 1},
            tune_config=TuneConfig(metric="x", mode="max"),
            run_config=RunConfig(
                storage_path=str(tmp_path), name="exp", verbose=0, executor="in_process"
            ),
        ).fit()
    assert [result.metrics["x"] for result in results] in ([1, 2], [2, 1])
    assert caplog.text.count("skipped a request that cannot be read") == len(BAD_ENTRIES)
