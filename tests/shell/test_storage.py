"""Experiment storage: safe names, stable directories and the files written."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
import threading
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tunecore.api.callback_states import STATES_FILE
from tunecore.core.naming import error_entry
from tunecore.core.results import flatten
from tunecore.model import CheckpointRef, CheckpointStorage, JsonValue, TrialSpec
from tunecore.shell import tfevents
from tunecore.shell.eventlog import LOG_FILE
from tunecore.shell.inbox import INBOX_DIR
from tunecore.shell.journal import SNAPSHOT_DIR
from tunecore.shell.lock import LOCK_FILE
from tunecore.shell.mirror.claims import SEGMENT_DIR
from tunecore.shell.mirror.lease import LEASE_FILE
from tunecore.shell.pbt_policy import GLOBAL_FILE, policy_file
from tunecore.shell.storage import file_queue, own_files
from tunecore.shell.storage import layout as storage_module
from tunecore.shell.storage.layout import (
    MAX_NAME_LENGTH,
    ExperimentStorage,
    NotInExperimentError,
    safe_name,
    to_json_value,
)

SAFE = re.compile(r"[A-Za-z0-9._=,+\-]+")


def spec(
    trial_id: str = "trial_00000",
    tag: str = "0",
    config: dict[str, JsonValue] | None = None,
    custom_name: str | None = None,
) -> TrialSpec:
    return TrialSpec(
        trial_id=trial_id,
        trainable_name="train",
        config=dict(config or {}),
        experiment_tag=tag,
        custom_name=custom_name,
    )


@pytest.fixture
def storage(tmp_path: Path) -> ExperimentStorage:
    return ExperimentStorage(tmp_path / "results", "exp")


def assert_safe(name: str) -> None:
    assert SAFE.fullmatch(name), name
    assert ".." not in name
    assert not name.startswith(".")
    assert not name.endswith(".")
    assert 0 < len(name) <= MAX_NAME_LENGTH


# -- names ----------------------------------------------------------------------

HOSTILE = [
    "../../etc",
    "/",
    "/etc/passwd",
    "..",
    ".",
    "...hidden",
    "a\x00b",
    "tab\there\nnewline\r\x1b[31m",
    "x" * 10_000,
    "学习率=0.1",
    "café ñ",
    "",
    " leading space",
    "C:\\Windows\\System32",
    "con",
    "name.",
]


@pytest.mark.parametrize("raw", HOSTILE)
def test_safe_name_is_always_one_safe_component(raw: str) -> None:
    assert_safe(safe_name(raw, keep="trial_00007"))


@given(st.text(st.characters(max_codepoint=127)) | st.text())
def test_a_name_is_made_safe_with_or_without_the_unicode_fold(raw: str) -> None:
    """ASCII skips the NFKD fold (it is its own fold): the same name."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", raw) if not unicodedata.combining(c))
    unsafe_to_underscore = re.sub(r"[^A-Za-z0-9._=,+\-]", "_", folded).strip(".")
    assert storage_module._sanitise(raw) == re.sub(r"\.{2,}", "_", unsafe_to_underscore)


@given(st.text(st.sampled_from("aZ9_=,+-.é/ "), max_size=12) | st.sampled_from(["con", "aux.1"]))
def test_a_safe_name_is_its_own_safe_name(raw: str) -> None:
    """A name the rules leave alone comes back as it is, and a name made
    safe is safe already (the usual name takes a shortcut past the rules)."""
    made = safe_name(raw, keep="t_00001")
    assert safe_name(made, keep="t_00001") == made
    if SAFE.fullmatch(raw) and ".." not in raw and raw[0] != "." and raw[-1] != ".":
        assert made == raw or raw.partition(".")[0].upper() in {"CON", "AUX"}


def test_safe_name_examples() -> None:
    assert safe_name("../../etc") == "___etc"
    assert safe_name("a/b\\c") == "a_b_c"
    assert safe_name("a\x00b") == "a_b"
    assert safe_name("café") == "cafe"
    assert safe_name("", fallback="trial_00003") == "trial_00003"
    assert safe_name("...") == "trial"
    assert safe_name("0_lr=0.01,momentum=0.9") == "0_lr=0.01,momentum=0.9"
    assert safe_name("con") == "_con"


def test_a_cut_name_keeps_the_trial_id() -> None:
    name = safe_name("y" * 10_000, keep="trial_00042")
    assert len(name) == MAX_NAME_LENGTH
    assert name.endswith("_trial_00042")


@pytest.mark.parametrize("tag", HOSTILE)
def test_trial_dirs_from_hostile_tags_stay_inside_the_experiment(
    storage: ExperimentStorage, tag: str
) -> None:
    path = storage.trial_dir(spec(tag=tag, config={"env": tag}))
    assert path.parent == storage.path
    assert path.is_dir()
    assert_safe(path.name)
    assert "trial_00000" in path.name


@pytest.mark.parametrize("dirname", HOSTILE)
def test_user_dirnames_are_sanitised_too(storage: ExperimentStorage, dirname: str) -> None:
    path = storage.trial_dir(spec(), dirname=dirname)
    assert path.parent == storage.path
    assert_safe(path.name)


# Every name tunecore gives an entry of the experiment directory itself.
EXPERIMENT_ENTRIES = [
    LOG_FILE,
    f"{LOG_FILE}.quarantine-120-20260101T000000Z",
    SNAPSHOT_DIR,
    INBOX_DIR,
    LOCK_FILE,
    LEASE_FILE,
    SEGMENT_DIR,
    STATES_FILE,
    GLOBAL_FILE,
    policy_file(Path(), "trial_00001").name,
]


@pytest.mark.parametrize("entry", [*EXPERIMENT_ENTRIES, "Inbox", "SNAPSHOTS"])
def test_a_user_dirname_never_takes_a_name_tunecore_keeps_for_itself(
    storage: ExperimentStorage, entry: str
) -> None:
    """`trial_dirname_creator` returning "inbox" put the trial's files in
    the inbox (a storage then shipped none of them), "snapshots" or
    "events" mixed them with the snapshots or the stored log, and
    "events.log" failed the trial. Such a name gets a leading '_', in any
    case (a file system may not tell "Inbox" from "inbox"), and the trial
    id: a creator's "_inbox" is another trial's directory."""
    path = storage.trial_dir(spec(), dirname=entry)
    assert path.name == f"_{entry}_{spec().trial_id}"
    assert path.parent == storage.path


def test_a_hostile_custom_name_is_sanitised(storage: ExperimentStorage) -> None:
    path = storage.trial_dir(spec(custom_name="../../" + "z" * 500))
    assert path.parent == storage.path
    assert_safe(path.name)


def test_a_hostile_experiment_name_stays_inside_the_root(tmp_path: Path) -> None:
    storage = ExperimentStorage(tmp_path, "../../escape")
    assert storage.path.parent == tmp_path.resolve()
    assert_safe(storage.path.name)


def test_default_trial_dir_name(storage: ExperimentStorage) -> None:
    path = storage.trial_dir(spec(trial_id="trial_00003", tag="3_lr=0.1"))
    assert path.name == "train_trial_00003_3_lr=0.1"
    with_env = storage.trial_dir(spec(tag="0", config={"env": "CartPole/v1"}))
    assert with_env.name == "train_CartPole_v1_trial_00000_0"


def test_long_tags_are_cut_but_trials_stay_apart(storage: ExperimentStorage) -> None:
    long_tag = "0_" + "p=1," * 200
    first = storage.trial_dir(spec(trial_id="trial_00000", tag=long_tag))
    second = storage.trial_dir(spec(trial_id="trial_00001", tag=long_tag))
    assert first != second
    assert len(first.name) <= MAX_NAME_LENGTH


def test_trial_dirs_are_stable_across_calls_and_processes(tmp_path: Path) -> None:
    trial = spec(tag="5_x=1")
    first = ExperimentStorage(tmp_path, "exp").trial_dir(trial)
    again = ExperimentStorage(tmp_path, "exp").trial_dir(trial)  # a resumed process
    assert first == again
    assert first == ExperimentStorage(tmp_path, "exp").trial_dir(trial)


# -- params.json ------------------------------------------------------------------


def test_params_json_round_trips_with_fallbacks(storage: ExperimentStorage) -> None:
    trial_dir = storage.trial_dir(spec())
    config: dict[str, object] = {
        "lr": 0.1,
        "layers": (64, 32),
        "nested": {"a": {"b": True}, 3: "int key"},
        "fn": len,
        "bad": math.nan,
    }
    path = storage.write_params(trial_dir, config)
    assert path == trial_dir / "params.json"
    written = json.loads(path.read_text())
    assert written == {
        "lr": 0.1,
        "layers": [64, 32],
        "nested": {"a": {"b": True}, "3": "int key"},
        "fn": repr(len),
        "bad": None,
    }
    storage.write_params(trial_dir, {"lr": 0.2})
    assert json.loads(path.read_text()) == {"lr": 0.2}
    assert [p.name for p in trial_dir.iterdir()] == ["params.json"]  # no temp file left


def test_a_link_planted_as_params_json_is_replaced_not_followed(
    storage: ExperimentStorage, tmp_path: Path
) -> None:
    """A new trial's params.json is created exclusively: a link in its
    place is not written through but replaced, as any rewrite does."""
    trial_dir = storage.trial_dir(spec())
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (trial_dir / "params.json").symlink_to(victim)
    storage.write_params(trial_dir, {"lr": 0.3})
    assert victim.read_text() == "keep me"
    assert not (trial_dir / "params.json").is_symlink()
    assert json.loads((trial_dir / "params.json").read_text()) == {"lr": 0.3}


def test_to_json_value_turns_non_finite_floats_into_null() -> None:
    assert to_json_value({"a": [math.inf, -math.inf, math.nan, 1.5]}) == {
        "a": [None, None, None, 1.5]
    }


# -- result.json and progress.csv --------------------------------------------------


def test_result_json_lines_parse_back(storage: ExperimentStorage) -> None:
    trial_dir = storage.trial_dir(spec())
    storage.append_result(trial_dir, {"training_iteration": 1, "loss": 0.5, "info": {"lr": 0.1}})
    storage.append_result(trial_dir, {"training_iteration": 2, "loss": math.nan})
    lines = (trial_dir / "result.json").read_text().splitlines()
    parsed = [json.loads(line) for line in lines]  # json.loads rejects NaN only if asked;
    assert "NaN" not in lines[1]  # so check the text too: strictly valid JSON
    assert parsed == [
        {"training_iteration": 1, "loss": 0.5, "info": {"lr": 0.1}},
        {"training_iteration": 2, "loss": None},
    ]


JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(),
    st.text(alphabet=st.sampled_from(["a", "\n", "\x85", "\u2028", "\u2029", "\x0b", "é", '"'])),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=4))
def test_a_result_line_is_one_line_of_strict_json_holding_the_result(
    result: dict[str, JsonValue],
) -> None:
    line = storage_module._json_line(result).decode()
    assert line.endswith("\n")
    assert len(line.splitlines()) == 1  # no line end a line reader would split at
    parsed = json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in {line!r}"))
    assert parsed == to_json_value(result)


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as file:
        reader = csv.DictReader(file)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def test_progress_csv_is_flattened(storage: ExperimentStorage) -> None:
    trial_dir = storage.trial_dir(spec())
    storage.append_result(trial_dir, {"training_iteration": 1, "info": {"lr": 0.1, "n": [1, 2]}})
    header, rows = read_csv(trial_dir / "progress.csv")
    assert header == ["training_iteration", "info/lr", "info/n"]
    assert rows == [{"training_iteration": "1", "info/lr": "0.1", "info/n": "[1, 2]"}]


def test_a_new_key_later_rewrites_progress_csv_with_the_union_header(
    storage: ExperimentStorage,
) -> None:
    trial_dir = storage.trial_dir(spec())
    storage.append_result(trial_dir, {"training_iteration": 1, "loss": 0.5})
    storage.append_result(trial_dir, {"training_iteration": 2, "loss": 0.4, "acc": 0.9})
    storage.append_result(trial_dir, {"training_iteration": 3, "acc": 0.95, "note": 'a,"b"\nc'})
    storage.append_result(trial_dir, {"training_iteration": 4, "loss": math.inf})
    header, rows = read_csv(trial_dir / "progress.csv")
    assert header == ["training_iteration", "loss", "acc", "note"]
    assert rows == [
        {"training_iteration": "1", "loss": "0.5", "acc": "", "note": ""},
        {"training_iteration": "2", "loss": "0.4", "acc": "0.9", "note": ""},
        {"training_iteration": "3", "loss": "", "acc": "0.95", "note": 'a,"b"\nc'},
        {"training_iteration": "4", "loss": "inf", "acc": "", "note": ""},
    ]
    assert float(rows[3]["loss"]) == math.inf
    assert [p.name for p in sorted(trial_dir.iterdir())] == ["progress.csv", "result.json"]


def test_a_resumed_process_keeps_appending_under_the_old_header(tmp_path: Path) -> None:
    trial = spec()
    first = ExperimentStorage(tmp_path, "exp")
    first.append_result(first.trial_dir(trial), {"a": 1, "b": 2}, json=False)
    second = ExperimentStorage(tmp_path, "exp")
    second.append_result(second.trial_dir(trial), {"b": 3, "a": 4}, json=False)
    second.append_result(second.trial_dir(trial), {"c": 5}, json=False)
    header, rows = read_csv(second.trial_dir(trial) / "progress.csv")
    assert header == ["a", "b", "c"]
    assert rows == [
        {"a": "1", "b": "2", "c": ""},
        {"a": "4", "b": "3", "c": ""},
        {"a": "", "b": "", "c": "5"},
    ]


def test_a_new_key_in_every_result_rewrites_progress_csv_a_logarithmic_number_of_times(
    storage: ExperimentStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rewriting the whole table for each new key made n such results cost
    O(n^2); the cells of new keys wait for the next rewrite, which comes once
    the table has doubled. No cell is lost: the trial's end writes them."""
    rewrites: list[Path] = []
    atomic = own_files.write_atomic

    def counting(path: Path, text: str, *, beneath: Path) -> None:
        rewrites.append(path)
        atomic(path, text, beneath=beneath)

    monkeypatch.setattr(storage_module, "write_atomic", counting)
    trial_dir = storage.trial_dir(spec())
    for i in range(200):
        storage.append_result(trial_dir, {"training_iteration": i + 1, f"k{i}": i})
    assert len(rewrites) <= 8  # at 2, 4, ..., 128 rows: log2(200), not 199
    storage.flush_progress(trial_dir)
    header, rows = read_csv(trial_dir / "progress.csv")
    assert header == ["training_iteration"] + [f"k{i}" for i in range(200)]
    assert [row["training_iteration"] for row in rows] == [str(i + 1) for i in range(200)]
    assert all(rows[i][f"k{i}"] == str(i) for i in range(200))
    assert sum(cell != "" for row in rows for cell in row.values()) == 400


def test_closing_the_storage_writes_the_cells_held_back(storage: ExperimentStorage) -> None:
    trial_dir = storage.trial_dir(spec())
    storage.append_result(trial_dir, {"i": 0})
    storage.append_result(trial_dir, {"i": 1, "soon": "y"})  # written: the table doubled
    storage.append_result(trial_dir, {"i": 2, "late": "x"})  # waits: 3 rows < 2 * 2
    assert "late" not in read_csv(trial_dir / "progress.csv")[0]
    assert not storage.progress_in_line(trial_dir, storage.read_results(trial_dir))
    storage.close()
    header, rows = read_csv(trial_dir / "progress.csv")
    assert header == ["i", "soon", "late"]
    assert [(row["soon"], row["late"]) for row in rows] == [("", ""), ("y", ""), ("", "x")]
    assert storage.progress_in_line(trial_dir, storage.read_results(trial_dir))


@given(st.lists(st.text(alphabet=st.sampled_from(list('ab ,"\r\n\t\x00é')), max_size=4)))
def test_a_progress_line_is_what_the_csv_module_writes(cells: list[str]) -> None:
    buffer = io.StringIO()
    csv.writer(buffer).writerow(cells)
    assert storage_module._csv_line(cells) == buffer.getvalue()


@given(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=6))
def test_a_progress_row_holds_each_flattened_value_as_its_cell(
    result: dict[str, JsonValue],
) -> None:
    expected = {key: storage_module._csv_cell(value) for key, value in flatten(result).items()}
    assert storage_module._csv_row(result) == expected


def test_a_background_writer_hands_a_rounds_lines_to_the_os_in_one_write_per_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """32 results of one trial, queued while the writer is busy, cost one
    write per file, and every line is there once the queue is drained."""
    writes: list[int] = []
    write_all = own_files.write_all

    def counting(fd: int, data: bytes | memoryview) -> None:
        writes.append(len(data))
        write_all(fd, data)

    monkeypatch.setattr(storage_module, "write_all", counting)
    monkeypatch.setattr(file_queue, "MAX_BEHIND", 64)  # 33 items wait behind the gate
    storage = ExperimentStorage(tmp_path, "exp", background=True)
    trial_dir = storage.trial_dir(spec())
    gate = threading.Event()
    monkeypatch.setattr(tfevents, "result_records", lambda *_: b"open" if gate.wait() else b"")
    storage.append_result(
        trial_dir, {}, json=False, csv=False, tensorboard=(trial_dir / "gate", 0.0, True)
    )
    for i in range(32):
        storage.append_result(trial_dir, {"training_iteration": i + 1, "loss": 1 / (i + 1)})
    gate.set()
    rows = storage.read_results(trial_dir)  # drains
    assert [row["training_iteration"] for row in rows] == list(range(1, 33))
    _, csv_rows = read_csv(trial_dir / "progress.csv")
    assert [row["training_iteration"] for row in csv_rows] == [str(i) for i in range(1, 33)]
    assert sorted(writes)[0] == 4  # the gate's
    assert len(writes) == 3  # the gate's, then one for result.json and one for progress.csv
    storage.close()


def test_a_rounds_results_of_several_trials_land_in_order_and_fail_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A round's results join one job per file and trial while they come
    one after another (`FileQueue.submit_batched`); a trial's results
    that come between another's, or a result whose record cannot be
    made, change nothing that is written."""
    encode = tfevents.result_records

    def records(result: dict[str, JsonValue], now: float, first: bool) -> bytes:
        if result.get("training_iteration") == 2:
            raise ValueError("no record for this one")
        return encode(result, now, first)

    monkeypatch.setattr(tfevents, "result_records", records)
    storage = ExperimentStorage(tmp_path, "exp", background=True)
    dirs = {t: storage.trial_dir(spec(trial_id=t, tag=t)) for t in ("a", "b")}
    events = {t: dirs[t] / "events.out.tfevents.test" for t in dirs}
    order = ["a", "a", "b", "a", "b", "b", "a"]
    counts = dict.fromkeys(dirs, 0)
    with (
        caplog.at_level("ERROR", logger="tunecore.shell.storage.file_queue"),
        storage.writes_held(),
    ):
        for trial in order:
            counts[trial] += 1
            n = counts[trial]
            tensorboard = (events[trial], float(n), n == 1)
            result: dict[str, JsonValue] = {"training_iteration": n, "loss": 1 / n}
            storage.append_result(dirs[trial], result, tensorboard=tensorboard)
    storage.close()
    for trial, directory in dirs.items():
        expected = list(range(1, counts[trial] + 1))
        lines = (directory / "result.json").read_text().splitlines()
        assert [json.loads(line)["training_iteration"] for line in lines] == expected
        _, rows = read_csv(directory / "progress.csv")
        assert [int(row["training_iteration"]) for row in rows] == expected
        written = tfevents.record(tfevents.version_event(1.0)) + b"".join(
            encode({"training_iteration": n, "loss": 1 / n}, float(n), False)
            for n in expected
            if n != 2
        )
        assert events[trial].read_bytes() == written
    failures = [r for r in caplog.records if "no record" in str(r.exc_info)]
    assert len(failures) == 1  # logged once; the next fails alike, at debug level


def test_a_file_that_cannot_be_written_keeps_no_other_from_its_lines(tmp_path: Path) -> None:
    appender = storage_module._Appender(beneath=tmp_path)
    (tmp_path / "gone").mkdir()
    good, bad = tmp_path / "good.txt", tmp_path / "gone" / "bad.txt"
    appender.append(bad, b"lost\n")
    appender.append(good, b"one\n")
    (tmp_path / "gone").rmdir()
    appender.append(good, b"two\n")
    with pytest.raises(FileNotFoundError):
        appender.flush()
    assert good.read_bytes() == b"one\ntwo\n"
    appender.append(good, b"three\n")
    appender.forget(good)  # writes what it held, then closes
    assert good.read_bytes() == b"one\ntwo\nthree\n"
    appender.close()


# -- error.txt ---------------------------------------------------------------------


def test_error_txt_holds_the_entries_verbatim(storage: ExperimentStorage) -> None:
    trial_dir = storage.trial_dir(spec())
    first = error_entry(1, 0.0, "Traceback (most recent call last):\nValueError: boom")
    second = error_entry(2, 86_400.5, "RuntimeError: again")
    storage.append_error(trial_dir, first)
    path = storage.append_error(trial_dir, second)
    assert path == trial_dir / "error.txt"
    assert path.read_text() == (
        "Failure # 1 (occurred at 1970-01-01_00-00-00)\n"
        "Traceback (most recent call last):\nValueError: boom\n"
        "Failure # 2 (occurred at 1970-01-02_00-00-00)\n"
        "RuntimeError: again\n"
    )


# -- checkpoints --------------------------------------------------------------------


def test_checkpoint_dirs_are_named_by_iteration_and_start_empty(
    storage: ExperimentStorage,
) -> None:
    trial_dir = storage.trial_dir(spec())
    path = storage.checkpoint_dir(trial_dir, 42)
    assert path == trial_dir / "checkpoint_000042"
    assert path.is_dir()
    assert list(path.iterdir()) == []
    (path / "model.bin").write_bytes(b"old")
    (path / "sub").mkdir()
    (path / "sub" / "x").write_text("old")
    again = storage.checkpoint_dir(trial_dir, 42)
    assert again == path
    assert list(path.iterdir()) == []


def test_a_recorded_checkpoint_is_never_written_over(storage: ExperimentStorage) -> None:
    """A trial restored to an earlier iteration (PBT's exploit) saves that
    iteration again: into a new directory, so another trial copying the
    recorded one (a donor's newest checkpoint) never sees it emptied."""
    trial_dir = storage.trial_dir(spec())
    recorded = storage.checkpoint_dir(trial_dir, 6)
    (recorded / "state").write_text("before the exploit")
    again = storage.checkpoint_dir(trial_dir, 6, [persistent(recorded)])
    assert again == trial_dir / "checkpoint_000006_1"
    assert list(again.iterdir()) == []
    assert (recorded / "state").read_text() == "before the exploit"
    held = [
        persistent(recorded),  # as the loop holds it: absolute
        storage.portable(persistent(again)),  # as the log records it: relative
        persistent(trial_dir / "checkpoint_000002"),
        persistent(storage.trial_dir(spec(trial_id="trial_00009")) / "checkpoint_000006_2"),
    ]
    assert storage.checkpoint_path(trial_dir, 6, held).name == "checkpoint_000006_2"
    assert storage.checkpoint_path(trial_dir, 7, held).name == "checkpoint_000007"


def test_a_checkpoint_a_later_generation_stored_under_its_own_name_is_held(
    storage: ExperimentStorage,
) -> None:
    """On an object store a worker of lease generation 2 stores the
    driver's `checkpoint_000006` as `checkpoint_000006_g2` (the name its
    log records). That iteration saved again must not be named
    `checkpoint_000006`: the worker would store it over the recorded one."""
    trial_dir = storage.trial_dir(spec())
    held = [
        persistent(trial_dir / "checkpoint_000006_g2"),
        persistent(trial_dir / "checkpoint_000006_1_g12"),
    ]
    assert storage.checkpoint_path(trial_dir, 6, held).name == "checkpoint_000006_2"
    assert storage.checkpoint_path(trial_dir, 6, held[1:]).name == "checkpoint_000006"


def test_a_link_planted_at_a_checkpoints_name_is_replaced_not_followed(
    storage: ExperimentStorage, tmp_path: Path
) -> None:
    """A trainable can put anything in its own trial directory, a link to
    a directory outside at its next checkpoint's name too: the name is the
    storage's to make, so the link is replaced by the checkpoint's empty
    directory (it made the driver raise before, ending the run)."""
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    trial_dir = storage.trial_dir(spec())
    (trial_dir / "checkpoint_000002").symlink_to(outside, target_is_directory=True)
    path = storage.checkpoint_dir(trial_dir, 2)
    assert path == trial_dir / "checkpoint_000002"
    assert path.is_dir()
    assert not path.is_symlink()
    assert list(path.iterdir()) == []
    assert [p.name for p in outside.iterdir()] == ["keep.txt"]


def persistent(path: Path) -> CheckpointRef:
    return CheckpointRef(storage=CheckpointStorage.PERSISTENT, path=str(path))


def test_re_creating_a_checkpoint_dir_does_not_follow_symlinks_out(
    storage: ExperimentStorage, tmp_path: Path
) -> None:
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    trial_dir = storage.trial_dir(spec())
    path = storage.checkpoint_dir(trial_dir, 1)
    (path / "link").symlink_to(outside, target_is_directory=True)
    storage.checkpoint_dir(trial_dir, 1)
    assert (outside / "keep.txt").read_text() == "keep"
    assert list(path.iterdir()) == []


def test_checkpoint_dir_rejects_bad_iterations_and_foreign_dirs(
    storage: ExperimentStorage, tmp_path: Path
) -> None:
    trial_dir = storage.trial_dir(spec())
    with pytest.raises(ValueError, match="iteration"):
        storage.checkpoint_dir(trial_dir, -1)
    with pytest.raises(ValueError, match="not inside the experiment directory"):
        storage.checkpoint_dir(tmp_path, 1)


def test_delete_checkpoint_removes_a_checkpoint_inside(storage: ExperimentStorage) -> None:
    trial_dir = storage.trial_dir(spec())
    path = storage.checkpoint_dir(trial_dir, 3)
    (path / "state").write_text("x")
    assert storage.delete_checkpoint(str(path)) is True
    assert not path.exists()
    assert trial_dir.is_dir()
    assert storage.delete_checkpoint(str(path)) is False  # already gone: fine


def test_delete_checkpoint_refuses_paths_outside_the_experiment(
    storage: ExperimentStorage, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_text("keep")
    trial_dir = storage.trial_dir(spec())
    link = trial_dir / "checkpoint_000009"
    link.symlink_to(outside, target_is_directory=True)
    refused = [
        outside,
        trial_dir / ".." / ".." / "outside",
        storage.path,
        trial_dir,  # a trial's own directory is not a checkpoint
        link,  # inside as written, outside once resolved
        Path("relative/checkpoint_000001"),
        Path("/"),
    ]
    for path in refused:
        assert storage.delete_checkpoint(path) is False, path
    assert (outside / "f").read_text() == "keep"
    assert trial_dir.is_dir()
    assert "Refusing to delete checkpoint" in caplog.text


def test_a_checkpoint_is_never_deleted_or_made_through_a_trial_directory_linked_inside(
    storage: ExperimentStorage, caplog: pytest.LogCaptureFixture
) -> None:
    """A trial directory replaced mid-run by a link to another trial's
    directory resolves inside the experiment, so retention deleting the
    first trial's checkpoint_000001 deleted the other trial's, and a save
    emptied it; a path reached through a link is refused as one outside."""
    mine = storage.trial_dir(spec(trial_id="trial_00000"))
    theirs = storage.trial_dir(spec(trial_id="trial_00001"))
    kept = storage.checkpoint_dir(theirs, 1)
    (kept / "model.bin").write_text("theirs")
    shutil.rmtree(mine)
    mine.symlink_to(theirs, target_is_directory=True)

    assert storage.delete_checkpoint(mine / "checkpoint_000001") is False
    with pytest.raises(NotInExperimentError, match="is a symbolic link"):
        storage.checkpoint_dir(mine, 1)
    assert (kept / "model.bin").read_text() == "theirs"
    assert "Refusing to delete checkpoint" in caplog.text


def test_the_root_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    storage = ExperimentStorage("~/tunecore_results", "exp")
    assert storage.path == tmp_path.resolve() / "tunecore_results" / "exp"
    assert storage.path.is_dir()


def test_a_shared_user_dirname_is_reported_once(
    storage: ExperimentStorage, caplog: pytest.LogCaptureFixture
) -> None:
    for _ in range(3):
        storage.trial_dir(spec(trial_id="trial_00000"), dirname="same")
        storage.trial_dir(spec(trial_id="trial_00001"), dirname="same")
    warnings = [r for r in caplog.records if "share the directory name" in r.getMessage()]
    assert len(warnings) == 1


def test_a_user_dirname_is_remembered_for_callers_that_only_have_the_spec(
    storage: ExperimentStorage,
) -> None:
    trial = spec(trial_id="trial_00004")
    chosen = storage.trial_dir(trial, dirname="my run/4")
    assert chosen.name == "my_run_4_trial_00004"  # a changed name keeps the id
    assert storage.trial_dir(trial) == chosen
    assert storage.experiment_dir == storage.path


def test_rewriting_results_gives_the_files_appending_them_gave(tmp_path: Path) -> None:
    """A resume's rewrite must leave exactly what the live appends wrote,
    header growth and nesting included; and a trial left with no rows
    loses both files."""
    rows: list[dict[str, JsonValue]] = [
        {"training_iteration": 1, "loss": 0.5},
        {"training_iteration": 2, "loss": 0.25, "extra": {"a": 1}},
        {"training_iteration": 3, "loss": float("nan"), "note": 'x,"y"'},
    ]
    appended, rewritten = ExperimentStorage(tmp_path, "a"), ExperimentStorage(tmp_path, "b")
    one = appended.trial_dir(spec())
    two = rewritten.trial_dir(spec())
    for row in rows:
        appended.append_result(one, row)
    rewritten.append_result(two, {"training_iteration": 9, "stale": True})
    rewritten.rewrite_results(two, rows)
    appended.close()
    for name in ("result.json", "progress.csv"):
        assert (two / name).read_text() == (one / name).read_text()
    assert rewritten.progress_in_line(two, rows)
    assert rewritten.read_results(two) == appended.read_results(one)
    later: dict[str, JsonValue] = {"training_iteration": 4, "loss": 0.1}
    rewritten.append_result(two, later)  # appends go on
    assert rewritten.progress_in_line(two, [*rows, later])
    rewritten.rewrite_results(two, [])
    assert not (two / "result.json").exists()
    assert not (two / "progress.csv").exists()
    rewritten.close()


def test_a_trial_dir_made_by_the_queue_comes_before_the_trials_files(tmp_path: Path) -> None:
    """`at_once=False`: the directory is a queued job like the files, so
    inside a held round it is not there yet, and once the round is handed
    over and drained the files written after it are inside it."""
    storage = ExperimentStorage(tmp_path, "exp", background=True)
    with storage.writes_held():
        trial_dir = storage.trial_dir(spec(), at_once=False)
        storage.write_params(trial_dir, {"lr": 0.1})
        storage.append_result(trial_dir, {"training_iteration": 1, "loss": 0.5})
        assert not trial_dir.exists()
    rows = storage.read_results(trial_dir)  # drains
    assert [row["loss"] for row in rows] == [0.5]
    assert json.loads((trial_dir / "params.json").read_text()) == {"lr": 0.1}
    assert storage.trial_dir(spec()) == trial_dir  # the same directory, once made
    storage.close()


def test_a_trial_dir_made_at_once_is_there_inside_a_held_round(tmp_path: Path) -> None:
    storage = ExperimentStorage(tmp_path, "exp", background=True)
    with storage.writes_held():
        assert storage.trial_dir(spec()).is_dir()
    storage.close()


TRIAL_IDS = st.tuples(
    st.from_regex(r"[0-9a-f]{5}_[0-9]{4,5}", fullmatch=True),
    st.lists(st.sampled_from("0123456789"), min_size=2, max_size=2, unique=True),
).map(lambda drawn: [drawn[0] + last for last in drawn[1]])
"""Two trials of one run: their ids differ in the last character only."""


@given(
    ids=TRIAL_IDS,
    head=st.sampled_from(["", "events.log.", "EVENTS.LOG.x.", "con.", "aux.", "pbt_policy_"]),
    body=st.text(st.sampled_from("ab=,.-_/é"), min_size=100, max_size=140),
    tails=st.lists(
        st.text(st.sampled_from("ab0"), max_size=6), min_size=2, max_size=2, unique=True
    ),
    with_id=st.booleans(),
)
def test_names_equal_in_their_first_100_characters_get_two_directories(
    tmp_path_factory: pytest.TempPathFactory,
    *,
    ids: list[str],
    head: str,
    body: str,
    tails: list[str],
    with_id: bool,
) -> None:
    """A `trial_dirname_creator` returning long names (or a name tunecore
    keeps for itself, or a device name, made longer by its leading '_')
    gave two trials one directory once the cut dropped the end that told
    them apart: `("_" + name)[:100]` cut the trial id off the end. A name
    tunecore cuts or prefixes keeps the whole trial id, so each trial has
    its own directory, and the same one in a resumed process."""
    root = tmp_path_factory.mktemp("exp")
    storage = ExperimentStorage(root, "exp")
    names = [
        head + body + tail + (f"_{trial_id}" if with_id else "")
        for trial_id, tail in zip(ids, tails, strict=True)
    ]
    dirs = [
        storage.trial_dir(spec(trial_id=trial_id), dirname=name)
        for trial_id, name in zip(ids, names, strict=True)
    ]
    assert dirs[0] != dirs[1]
    for trial_id, name, made in zip(ids, names, dirs, strict=True):
        assert_safe(made.name)
        resumed = ExperimentStorage(root, "exp")
        assert resumed.trial_dir(spec(trial_id=trial_id), dirname=name) == made


def test_a_long_name_tunecore_keeps_for_itself_keeps_the_trial_id(
    storage: ExperimentStorage,
) -> None:
    """The example: 'events.log.' and 90 characters, then the trial id."""
    body = "events.log." + "x" * 78
    first = storage.trial_dir(spec(trial_id="abc12_00001"), dirname=body + "abc12_00001")
    second = storage.trial_dir(spec(trial_id="abc12_00002"), dirname=body + "abc12_00002")
    assert first != second
    assert first.name.startswith("_events.log.")
    assert first.name.endswith("abc12_00001")


@pytest.mark.parametrize(
    ("first", "second"),
    [("a/b", "a_b"), ("a:b", "a?b"), ("Café", "Cafe"), ("inbox", "_inbox"), ("CON", "_CON")],
)
def test_user_dirnames_that_differ_only_where_tunecore_changed_them_stay_apart(
    tmp_path: Path, first: str, second: str
) -> None:
    """Two trials whose creator names became one name once tunecore made
    it safe shared a directory: their result.json rows mixed, and one's
    checkpoint_000001 replaced the other's. A changed name keeps the
    trial id, and a resumed process finds the same directories."""
    storage = ExperimentStorage(tmp_path, "exp")
    one, two = spec(trial_id="trial_00001"), spec(trial_id="trial_00002")
    dirs = (storage.trial_dir(one, dirname=first), storage.trial_dir(two, dirname=second))
    assert dirs[0] != dirs[1]
    for made in dirs:
        assert_safe(made.name)
    resumed = ExperimentStorage(tmp_path, "exp")
    assert resumed.trial_dir(one, dirname=first) == dirs[0]
    assert resumed.trial_dir(two, dirname=second) == dirs[1]


def test_a_safe_user_dirname_is_kept_as_it_is(storage: ExperimentStorage) -> None:
    assert storage.trial_dir(spec(trial_id="trial_00001"), dirname="run-1").name == "run-1"
