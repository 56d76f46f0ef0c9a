"""FunctionTrainable: the user's function in its own thread, driven one result
at a time through the report/continue handshake.

Every test runs real threads in real temporary directories and never sleeps:
`train()` returns only once the function is parked in a report (or ended),
which is the synchronisation the tests rely on.
"""

from __future__ import annotations

import datetime
import inspect
import ipaddress
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.shell.trainable.conftest import MakeFunction, make_context
from tunecore.model import JsonDict, JsonValue
from tunecore.shell.trainable import (
    RESULT_DUPLICATE,
    Checkpoint,
    FunctionForm,
    FunctionTrainable,
    StatusReporter,
    TrainableError,
    TrialContext,
    WorkerTrainable,
    checkpoint_dir,
    function_form,
    get_checkpoint,
    get_context,
    report,
)
from tunecore.shell.trainable.checkpoint_files import (
    META_FILE,
    NULL_MARKER,
    TEMP_MARKER,
    read_meta,
    unpack_checkpoint,
)


def make_checkpoint(path: Path, content: str) -> Checkpoint:
    path.mkdir(parents=True, exist_ok=True)
    (path / "state.txt").write_text(content)
    return Checkpoint.from_directory(path)


def seconds(value: JsonValue) -> float:
    assert isinstance(value, int | float)
    return float(value)


def trial_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("tunecore-trial-")]


@pytest.fixture(autouse=True)
def no_leftover_threads() -> Iterator[None]:
    yield
    # The make_function fixture stops every trainable after the test; a
    # stopped function's thread has been joined.
    assert trial_threads() == []


# --- the handshake ---------------------------------------------------------------------------


def test_code_after_a_report_runs_only_at_the_next_train(make_function: MakeFunction) -> None:
    events: list[str] = []

    def fn(config: JsonDict) -> None:
        events.append("start")
        report({"step": 1})
        events.append("after first report")
        report({"step": 2})
        events.append("after second report")

    trainable = make_function(fn)
    assert events == []  # nothing runs before the first train()

    first = trainable.train()
    assert first["step"] == 1
    assert events == ["start"]

    second = trainable.train()
    assert second["step"] == 2
    assert events == ["start", "after first report"]


def test_train_within_leaves_a_slow_step_running_and_the_next_train_takes_its_result(
    make_function: MakeFunction,
) -> None:
    release = threading.Event()
    events: list[str] = []

    def fn(config: JsonDict) -> None:
        report({"step": 1})
        events.append("second step begins")
        release.wait()
        report({"step": 2})
        events.append("after second report")

    trainable = make_function(fn)
    first = trainable.train_within(5.0)
    assert first is not None
    assert first["step"] == 1
    assert trainable.train_within(0.05) is None  # the second step blocks: not yet
    assert trainable.train_within(0.0) is None  # still waiting on the same step
    release.set()
    second = trainable.train()
    assert second["step"] == 2
    assert events == ["second step begins"]  # it ran once, and is parked in its report
    end = trainable.train()
    assert end[RESULT_DUPLICATE] is True
    assert events == ["second step begins", "after second report"]


def test_results_carry_the_automatic_fields(make_function: MakeFunction) -> None:
    def fn(config: JsonDict) -> None:
        for i in range(3):
            sum(range(1000))
            report({"i": i})

    trainable = make_function(fn)
    results = [trainable.train() for _ in range(3)]

    assert [r["training_iteration"] for r in results] == [1, 2, 3]
    assert [r["iterations_since_restore"] for r in results] == [1, 2, 3]
    assert [r["i"] for r in results] == [0, 1, 2]
    for result in results:
        assert isinstance(result["time_this_iter_s"], float)
        assert result["time_this_iter_s"] > 0
        assert result["done"] is False
        assert result["pid"] == os.getpid()
        assert isinstance(result["hostname"], str)
        assert result["hostname"]
        assert isinstance(result["timestamp"], int)
        # Ray's trainable also fills in the local date of the timestamp and
        # the node's IP address.
        date = result["date"]
        assert isinstance(date, str)
        assert datetime.datetime.strptime(date, "%Y-%m-%d_%H-%M-%S") == (
            datetime.datetime.fromtimestamp(result["timestamp"])
        )
        assert isinstance(result["node_ip"], str)
        ipaddress.ip_address(result["node_ip"])  # raises unless it is an IP address
        assert "should_checkpoint" not in result
    times = [seconds(r["time_this_iter_s"]) for r in results]
    totals = [seconds(r["time_total_s"]) for r in results]
    assert totals == pytest.approx([times[0], times[0] + times[1], sum(times)])
    assert results[-1]["time_since_restore"] == pytest.approx(totals[-1])


def test_a_user_time_this_iter_s_and_training_iteration_are_kept(
    make_function: MakeFunction,
) -> None:
    """Ray's `result.setdefault`: the function's own `training_iteration`
    stays; a result without one gets the count, which went on beneath."""

    def fn(config: JsonDict) -> None:
        report({"time_this_iter_s": 2.5, "training_iteration": 99})
        report({"time_this_iter_s": 1.0})

    trainable = make_function(fn)
    first, second = trainable.train(), trainable.train()
    assert (first["time_this_iter_s"], first["training_iteration"]) == (2.5, 99)
    assert (second["time_total_s"], second["training_iteration"]) == (3.5, 2)
    assert second["iterations_since_restore"] == 2


def test_the_function_gets_its_own_copy_of_the_config(make_function: MakeFunction) -> None:
    config: JsonDict = {"nested": {"lr": 0.1}}

    def fn(config: JsonDict) -> None:
        nested = config["nested"]
        assert isinstance(nested, dict)
        nested["lr"] = 1.0
        report({"lr": nested["lr"]})

    assert make_function(fn, config).train()["lr"] == 1.0
    assert config == {"nested": {"lr": 0.1}}


def test_numpy_style_scalars_are_reported_as_plain_numbers(make_function: MakeFunction) -> None:
    class Scalar:
        def item(self) -> float:
            return 0.25

    class Float(float):
        pass

    def fn(config: JsonDict) -> None:
        report({"a": Scalar(), "b": Float(1.5), "c": (1, 2)})

    result = make_function(fn).train()
    assert (result["a"], result["b"], result["c"]) == (0.25, 1.5, [1, 2])
    assert type(result["b"]) is float


def test_a_metric_that_is_not_json_is_reported_as_its_text(make_function: MakeFunction) -> None:
    class Model:
        def __str__(self) -> str:
            return "a model"

    def fn(config: JsonDict) -> None:
        report({"model": Model(), "where": Path("/data")})

    result = make_function(fn).train()
    assert (result["model"], result["where"]) == ("a model", "/data")


def test_metrics_that_are_not_a_dict_fail_at_the_report(make_function: MakeFunction) -> None:
    def fn(config: JsonDict) -> None:
        report([1, 2])  # type: ignore[arg-type]

    with pytest.raises(TrainableError) as failure:
        make_function(fn).train()
    assert "report(metrics) must be a dict with string keys, got list" in str(failure.value)
    assert "report([1, 2])" in str(failure.value)  # the user's line


# --- how a function ends ---------------------------------------------------------------------


END_MARKER = {"done": True, RESULT_DUPLICATE: True}


def test_a_function_that_returns_ends_with_the_end_marker(
    make_function: MakeFunction,
) -> None:
    def fn(config: JsonDict) -> None:
        report({"loss": 0.5})
        report({"loss": 0.25})

    trainable = make_function(fn)
    trainable.train()
    assert trainable.train()["training_iteration"] == 2
    assert trainable.train() == END_MARKER  # no result of its own: nothing counted again
    with pytest.raises(RuntimeError, match="the function has ended"):
        trainable.train()


def test_a_returned_dict_is_reported_before_the_end(make_function: MakeFunction) -> None:
    def fn(config: JsonDict) -> JsonDict:
        report({"loss": 0.5})
        return {"loss": 0.25}

    trainable = make_function(fn)
    trainable.train()
    last = trainable.train()
    assert (last["loss"], last["training_iteration"], last["done"]) == (0.25, 2, False)
    assert trainable.train() == END_MARKER


@pytest.mark.parametrize("returned", [0, 0.0, {}, False])
def test_an_empty_or_zero_return_is_not_reported(
    make_function: MakeFunction, returned: object
) -> None:
    assert make_function(lambda config: returned).train() == END_MARKER


def test_a_return_that_is_no_result_is_an_error(make_function: MakeFunction) -> None:
    with pytest.raises(TrainableError, match="returned a list; return nothing, a dict"):
        make_function(lambda config: [0.5]).train()


def test_stop_iteration_ends_the_function_cleanly(make_function: MakeFunction) -> None:
    def fn(config: JsonDict) -> None:
        report({"loss": 0.5})
        raise StopIteration

    trainable = make_function(fn)
    trainable.train()
    assert trainable.train() == END_MARKER


def test_an_exception_is_raised_from_train_with_its_traceback(
    make_function: MakeFunction,
) -> None:
    def failing_function(config: JsonDict) -> None:
        report({"loss": 0.5})
        raise ValueError("boom")

    trainable = make_function(failing_function)
    trainable.train()
    with pytest.raises(TrainableError) as failure:
        trainable.train()
    message = str(failure.value)
    assert message.startswith("Trial t1 raised an exception. Traceback:\n")
    assert "in failing_function" in message
    assert 'raise ValueError("boom")' in message
    assert "ValueError: boom" in message


def test_a_function_that_never_reports_just_ends(make_function: MakeFunction) -> None:
    def silent(config: JsonDict) -> None:
        pass

    assert make_function(silent).train() == END_MARKER


def test_stop_unwinds_a_function_parked_in_a_report(make_function: MakeFunction) -> None:
    events: list[str] = []

    def fn(config: JsonDict) -> None:
        try:
            while True:
                try:
                    report({"x": 1})
                except Exception:  # a user's catch-all must not swallow the stop
                    events.append("swallowed")
        finally:
            events.append("finally")

    trainable = make_function(fn)
    trainable.train()
    trainable.train()
    assert len(trial_threads()) == 1

    trainable.stop()  # returns: no error from the unwinding function

    assert events == ["finally"]
    assert trial_threads() == []
    with pytest.raises(RuntimeError, match="stopped"):
        trainable.train()


def test_stop_before_the_first_train_is_fine(make_function: MakeFunction) -> None:
    make_function(lambda config: None).stop()


# --- checkpoints -----------------------------------------------------------------------------


def test_a_reported_checkpoint_flags_its_result_and_save_copies_it(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    user_dir = tmp_path / "user_checkpoint"

    def fn(config: JsonDict) -> None:
        report({"step": 1})
        report({"step": 2}, checkpoint=make_checkpoint(user_dir, "two"))
        report({"step": 3})

    trainable = make_function(fn)
    assert "should_checkpoint" not in trainable.train()
    assert trainable.train()["should_checkpoint"] is True
    assert "should_checkpoint" not in trainable.train()

    saved = tmp_path / "checkpoint_000003"
    saved.mkdir()
    assert trainable.save(str(saved)) == str(saved)

    assert (saved / "state.txt").read_text() == "two"
    meta = read_meta(str(saved))
    assert meta is not None
    assert meta.training_iteration == 2  # the iteration the state belongs to
    assert user_dir.is_dir()  # the user's directory is theirs
    trainable.stop()
    assert user_dir.is_dir()


def test_ray_s_own_checkpoint_is_taken_as_the_same_directory(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    """A library built on Ray hands over Ray's own `Checkpoint` (RLlib's
    `algo.save().checkpoint`), in code no import rewriting reaches: it is
    saved as tunecore's of the same directory. Before, it was refused as
    "takes a Checkpoint, got Checkpoint"."""
    pytest.importorskip(
        "fsspec"
    )  # ray.train needs it; ray[tune], which tunecore depends on, has it
    ray_train = pytest.importorskip("ray.train")
    user_dir = tmp_path / "library_checkpoint"
    make_checkpoint(user_dir, "from the library")

    def fn(config: JsonDict) -> None:
        report({"step": 1}, checkpoint=ray_train.Checkpoint.from_directory(str(user_dir)))

    trainable = make_function(fn)
    assert trainable.train()["should_checkpoint"] is True
    saved = tmp_path / "checkpoint_000001"
    saved.mkdir()
    trainable.save(str(saved))
    assert (saved / "state.txt").read_text() == "from the library"


def test_a_checkpoint_reported_from_a_temporary_directory_is_saved_after_it_is_gone(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    def fn(config: JsonDict) -> None:
        with tempfile.TemporaryDirectory() as directory:
            report({"step": 1}, checkpoint=make_checkpoint(Path(directory), "one"))
        report({"step": 2})

    trainable = make_function(fn)
    trainable.train()
    trainable.train()  # the temporary directory is gone now

    trainable.save(str(tmp_path / "saved"))
    assert (tmp_path / "saved" / "state.txt").read_text() == "one"
    unpacked = tmp_path / "unpacked"
    unpack_checkpoint(trainable.save_to_bytes(), str(unpacked))
    assert (unpacked / "state.txt").read_text() == "one"


def test_a_reported_checkpoint_is_a_copy_the_user_cannot_change_and_saves_share_it(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    user_dir = tmp_path / "user"

    def fn(config: JsonDict) -> None:
        report({"step": 1}, checkpoint=make_checkpoint(user_dir, "one"))
        (user_dir / "state.txt").write_text("changed in place")  # the same file, truncated
        report({"step": 2})

    trainable = make_function(fn)
    trainable.train()
    trainable.train()
    saved = tmp_path / "saved"
    trainable.save(str(saved))
    assert (saved / "state.txt").read_text() == "one"
    # The save links tunecore's private copy instead of copying it again.
    assert os.stat(saved / "state.txt").st_nlink == 2


def test_only_the_latest_copy_of_a_reported_checkpoint_is_kept(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    user_dir = tmp_path / "user"

    def fn(config: JsonDict) -> None:
        for step in range(3):
            report({"step": step}, checkpoint=make_checkpoint(user_dir, str(step)))

    trainable = make_function(fn)
    scratch = Path(trainable._scratch_dir())
    assert scratch.parent == tmp_path / "t1" / "worker_checkpoints"
    copies = []
    for _ in range(3):
        trainable.train()
        [copy] = scratch.iterdir()
        copies.append(copy)
    assert len(set(copies)) == 3
    assert (copies[-1] / "state.txt").read_text() == "2"
    trainable.stop()
    assert not scratch.exists()
    assert user_dir.is_dir()


def test_without_a_reported_checkpoint_save_writes_a_null_checkpoint(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    def fn(config: JsonDict) -> None:
        while True:
            report({"checkpoint_seen": get_checkpoint() is not None})

    first = make_function(fn)
    first.train()
    first.train()
    saved = tmp_path / "saved"
    saved.mkdir()
    first.save(str(saved))
    assert sorted(os.listdir(saved)) == sorted([NULL_MARKER, META_FILE])

    second = make_function(fn, trial_id="t2")
    second.restore(str(saved))
    result = second.train()
    assert result["checkpoint_seen"] is False  # a null checkpoint means start fresh
    assert result["training_iteration"] == 1


def test_restore_gives_the_function_the_checkpoint_and_continues_the_count(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    def fn(config: JsonDict) -> None:
        start = 0
        checkpoint = get_checkpoint()
        if checkpoint is not None:
            with checkpoint.as_directory() as path:
                start = int(Path(path, "state.txt").read_text())
        for step in range(start, start + 10):
            report({"step": step}, checkpoint=make_checkpoint(tmp_path / f"s{step}", str(step)))

    first = make_function(fn)
    first.train()
    first.train()
    saved = tmp_path / "saved"
    first.save(str(saved))
    first.stop()

    second = make_function(fn, trial_id="t2")
    second.restore(str(saved))
    result = second.train()

    assert result["step"] == 1  # the function resumed from the state "1"
    assert result["training_iteration"] == 3
    assert result["iterations_since_restore"] == 1


def test_get_checkpoint_after_restore_is_the_restored_directory(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    seen: list[Checkpoint | None] = []

    def fn(config: JsonDict) -> None:
        seen.append(get_checkpoint())
        report({"x": 1})

    restored = make_checkpoint(tmp_path / "by_hand", "0")
    trainable = make_function(fn)
    trainable.restore(restored.path)
    result = trainable.train()

    assert seen == [Checkpoint.from_directory(restored.path)]
    # A directory tunecore did not save has no iteration: counting starts over.
    assert result["training_iteration"] == 1


def test_restore_while_running_restarts_the_function_from_the_checkpoint(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    starts: list[Checkpoint | None] = []

    def fn(config: JsonDict) -> None:
        starts.append(get_checkpoint())
        while True:
            report({"x": 1}, checkpoint=make_checkpoint(tmp_path / "c", "x"))

    trainable = make_function(fn)
    trainable.train()
    trainable.train()
    saved = tmp_path / "saved"
    trainable.save(str(saved))
    trainable.train()

    trainable.restore(str(saved))
    assert len(trial_threads()) == 0  # the running function was ended
    result = trainable.train()
    assert starts == [None, Checkpoint.from_directory(saved)]
    assert (result["training_iteration"], result["iterations_since_restore"]) == (3, 1)


def test_a_restored_function_that_is_already_done_ends_without_error(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    def fn(config: JsonDict) -> None:
        if get_checkpoint() is None:
            report({"step": 1}, checkpoint=make_checkpoint(tmp_path / "c", "1"))

    first = make_function(fn)
    first.train()
    state = first.save_to_bytes()

    second = make_function(fn, trial_id="t2")
    second.restore_from_bytes(state)
    assert second.train() == END_MARKER
    second.save(str(tmp_path / "again"))
    meta = read_meta(str(tmp_path / "again"))
    assert meta is not None
    assert meta.training_iteration == 1  # the counts continue from the restore


def test_bytes_round_trip_through_a_temporary_checkpoint(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    restored_from: list[str] = []

    def fn(config: JsonDict) -> None:
        checkpoint = get_checkpoint()
        fresh = checkpoint is None
        if checkpoint is None:
            checkpoint = make_checkpoint(tmp_path / "made", "from-first")
        else:
            restored_from.append(checkpoint.path)
        state = Path(checkpoint.path, "state.txt").read_text()
        while True:
            # Only the first trainable reports a checkpoint; the second one's
            # latest checkpoint is the temporary one it was restored from.
            report({"state": state}, checkpoint=checkpoint if fresh else None)

    first = make_function(fn)
    first.train()
    first.train()
    data = first.save_to_bytes()
    first.stop()

    second = make_function(fn, trial_id="t2")
    second.restore_from_bytes(data)
    result = second.train()
    assert result["state"] == "from-first"
    assert result["training_iteration"] == 3  # continues from the checkpoint's iteration 2

    (temporary,) = restored_from
    assert temporary.startswith(second._context.trial_dir)
    assert os.path.exists(os.path.join(temporary, TEMP_MARKER))

    # Saving a temporary checkpoint makes it permanent: a real copy, unmarked.
    permanent = tmp_path / "t2" / "checkpoint_000003"
    second.save(str(permanent))
    assert (permanent / "state.txt").read_text() == "from-first"
    assert not (permanent / TEMP_MARKER).exists()
    meta = read_meta(str(permanent))
    assert meta is not None
    assert meta.training_iteration == 2
    assert os.path.isdir(temporary)  # kept while the function may still read it

    second.stop()
    assert not os.path.exists(temporary)
    assert (permanent / "state.txt").read_text() == "from-first"


def test_save_to_bytes_without_a_checkpoint_is_a_null_checkpoint(
    make_function: MakeFunction,
) -> None:
    def fn(config: JsonDict) -> None:
        seen = get_checkpoint()
        while True:
            report({"seen": seen is not None})

    first = make_function(fn)
    first.train()
    second = make_function(fn, trial_id="t2")
    second.restore_from_bytes(first.save_to_bytes())
    result = second.train()
    assert result["seen"] is False
    assert result["training_iteration"] == 1


def test_restore_from_bytes_refuses_what_is_not_an_archive(make_function: MakeFunction) -> None:
    trainable = make_function(lambda config: None)
    with pytest.raises(ValueError, match="not a checkpoint archive"):
        trainable.restore_from_bytes(b"definitely not a tar")
    assert os.listdir(trainable._scratch_dir()) == []


# --- legacy signatures -----------------------------------------------------------------------


def test_legacy_reporter_signature(make_function: MakeFunction) -> None:
    seen: list[tuple[str, str, str]] = []

    def fn(config: JsonDict, reporter: StatusReporter) -> None:
        seen.append((reporter.trial_id, reporter.trial_name, reporter.logdir))
        reporter(loss=0.5)
        reporter(loss=0.25, done=True)

    trainable = make_function(fn)
    assert trainable.train()["loss"] == 0.5
    last = trainable.train()
    assert (last["loss"], last["done"]) == (0.25, True)
    assert seen == [("t1", "t1_name", trainable._context.trial_dir)]


def test_legacy_checkpoint_dir_signature(make_function: MakeFunction, tmp_path: Path) -> None:
    given: list[str | None] = []
    made: list[str] = []

    def fn(config: JsonDict, checkpoint_dir: str | None = None) -> None:
        given.append(checkpoint_dir)
        start = 0 if checkpoint_dir is None else int(Path(checkpoint_dir, "step").read_text())
        for step in range(start, start + 10):
            with _checkpoint_dir(step) as directory:
                Path(directory, "step").write_text(str(step + 1))
                made.append(directory)
            report({"step": step})

    first = make_function(fn)
    first_result = first.train()
    assert first_result["should_checkpoint"] is True
    first.train()
    assert made[0].startswith(first._context.trial_dir)
    assert not os.path.exists(made[0])  # superseded by the next step's directory
    saved = tmp_path / "saved"
    first.save(str(saved))
    first.stop()
    assert not os.path.exists(made[1])  # what tunecore made is gone with the trainable

    second = make_function(fn, trial_id="t2")
    second.restore(str(saved))
    result = second.train()
    assert given == [None, str(saved)]
    assert (result["step"], result["training_iteration"]) == (2, 3)


_checkpoint_dir = checkpoint_dir  # the legacy parameter shadows the name inside fn


def test_a_checkpoint_made_after_the_last_report_goes_with_the_final_result(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    def fn(config: JsonDict, checkpoint_dir: str | None = None) -> None:
        report({"step": 1})
        with _checkpoint_dir(1) as directory:
            Path(directory, "final").write_text("yes")

    trainable = make_function(fn)
    trainable.train()
    assert trainable.train() == {**END_MARKER, "should_checkpoint": True}
    trainable.save(str(tmp_path / "saved"))
    assert (tmp_path / "saved" / "final").read_text() == "yes"


def test_signature_detection() -> None:
    def config_only(config: JsonDict) -> None: ...
    def with_reporter(config: JsonDict, reporter: StatusReporter) -> None: ...
    def with_checkpoint_dir(config: JsonDict, checkpoint_dir: str | None = None) -> None: ...
    def with_defaults(config: JsonDict, extra: int = 1) -> None: ...

    assert function_form(config_only) is FunctionForm.CONFIG
    assert function_form(with_reporter) is FunctionForm.REPORTER
    assert function_form(with_checkpoint_dir) is FunctionForm.CHECKPOINT_DIR
    assert function_form(with_defaults) is FunctionForm.CONFIG


def test_a_functions_signature_is_read_once_however_many_trials_it_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[object] = []
    real_signature = inspect.signature

    def counted(fn: Callable[..., object]) -> inspect.Signature:
        reads.append(fn)
        return real_signature(fn)

    def trainable(config: JsonDict, checkpoint_dir: str | None = None) -> None: ...
    def another(config: JsonDict) -> None: ...

    monkeypatch.setattr(inspect, "signature", counted)
    for index in range(100):  # more functions than are kept, as in a long session
        function_form(lambda config, _index=index: None)
    reads.clear()
    for _ in range(3):
        assert function_form(trainable) is FunctionForm.CHECKPOINT_DIR
        assert function_form(another) is FunctionForm.CONFIG
    assert reads == [trainable, another]


def test_other_signatures_are_refused_naming_their_parameters(context: TrialContext) -> None:
    def two_required(config: JsonDict, data: list[int]) -> None: ...
    def both(config: JsonDict, reporter: object, checkpoint_dir: str | None = None) -> None: ...
    def generator(config: JsonDict) -> Iterator[int]:
        yield 1

    cases: list[tuple[Callable[..., object], str]] = [
        (two_required, "(config, data)"),
        (both, "(config, reporter, checkpoint_dir)"),
        (lambda: None, "(none)"),
    ]
    for fn, parameters in cases:
        with pytest.raises(ValueError, match=re.escape(parameters)) as refused:
            FunctionTrainable(fn, {}, context)
        accepted = "fn(config), fn(config, reporter), fn(config, checkpoint_dir=None)"
        assert accepted in str(refused.value)
    with pytest.raises(ValueError, match="generator"):
        function_form(generator)


# --- reset -----------------------------------------------------------------------------------


def test_reset_starts_the_function_afresh_for_the_new_trial(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    def fn(config: JsonDict) -> None:
        while True:
            report({"x": config["x"], "trial": get_context().trial_id})

    trainable = make_function(fn, {"x": 1})
    trainable.train()
    trainable.train()

    assert trainable.reset({"x": 2}, make_context(tmp_path, "t2")) is True
    assert trial_threads() == []
    result = trainable.train()
    assert (result["x"], result["trial"], result["training_iteration"]) == (2, "t2", 1)


def test_a_function_trainable_is_a_worker_trainable(make_function: MakeFunction) -> None:
    trainable: WorkerTrainable = make_function(lambda config: report({"x": 1}))
    assert trainable.train()["x"] == 1


def test_a_worker_leaving_a_trial_keeps_the_files_of_the_worker_that_took_it_over(
    make_function: MakeFunction, tmp_path: Path
) -> None:
    """A trial PBT pauses on one worker may resume on another while the
    first is reset for a new trial: the first deletes only what it made, not
    the restored checkpoint the second unpacked into the same trial's
    directory (the second's function then found it gone, once in 20 runs of
    a PBT experiment with temporary checkpoints)."""

    def fn(config: JsonDict) -> None:
        step = 0
        checkpoint = get_checkpoint()
        if checkpoint is not None:
            with checkpoint.as_directory() as directory:
                step = int((Path(directory) / "state.txt").read_text())
        report({"step": step + 1}, checkpoint=make_checkpoint(tmp_path / "user", str(step + 1)))

    leaving = make_function(fn, trial_id="t1")
    leaving.train()
    taking_over = make_function(fn, trial_id="t1")
    taking_over.restore_from_bytes(leaving.save_to_bytes())
    leaving.reset({}, make_context(tmp_path, "t2"))
    assert taking_over.train()["step"] == 2
