"""Failure texts as users read them (`error.txt`, `Result.error`): no
terminal colour codes, the user's frames first, tunecore's after them
under a label."""

from __future__ import annotations

from pathlib import Path

import tunecore
from tunecore import RunConfig, TuneConfig, Tuner
from tunecore.model import TrialStatus
from tunecore.shell.trainable.errors import (
    TUNECORE_DIR,
    TUNECORE_FRAMES_LABEL,
    failure_reason,
    user_frames_first,
)

OWN = f"{TUNECORE_DIR}/shell"
HERE = __file__


def own(name: str, line: int, function: str, code: str) -> str:
    return f'  File "{OWN}/{name}", line {line}, in {function}\n    {code}\n'


def user(line: int, function: str, code: str) -> str:
    return f'  File "/home/me/train.py", line {line}, in {function}\n    {code}\n'


WRAPPED = (
    "Traceback (most recent call last):\n"
    + own("executors/host.py", 70, "train", "return self._current().train()")
    + "           ^^^^^^^^^^^^^^^^^^^^^^^\n"
    + own("trainable/function.py", 205, "train", "raise TrainableError(")
    + "tunecore.shell.trainable.errors.TrainableError: Trial a_00000 raised. Traceback:\n"
    + "Traceback (most recent call last):\n"
    + own("trainable/session.py", 127, "run", "call()")
    + user(8, "train", 'helper(config["x"])')
    + user(5, "helper", "raise ValueError(x)")
    + "ValueError: bad 1\n"
)

USERS = (
    "Traceback (most recent call last):\n"
    + user(8, "train", 'helper(config["x"])')
    + user(5, "helper", "raise ValueError(x)")
    + "ValueError: bad 1\n"
)


def test_the_users_frames_come_first_and_tunecores_after_a_label() -> None:
    text = user_frames_first(WRAPPED)
    assert text.startswith(USERS + "\n" + TUNECORE_FRAMES_LABEL + "\n")
    rest = text.partition(TUNECORE_FRAMES_LABEL)[2]
    assert rest.index("host.py") < rest.index("TrainableError") < rest.index("session.py")
    assert "/home/me/train.py" not in rest
    assert failure_reason(text) == "ValueError: bad 1"


def test_rays_colour_codes_and_headers_are_cleaned_up() -> None:
    header = "\x1b[36mray::TrialHost.train()\x1b[39m (pid=7764, ip=10.0.0.2)"
    ray_text = (
        header
        + "\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        + WRAPPED.replace("Traceback (most recent call last):", header)
    )
    text = user_frames_first(ray_text)
    assert "\x1b" not in text
    assert text.startswith(USERS + "\n" + TUNECORE_FRAMES_LABEL + "\n")
    assert "ray::TrialHost.train() (pid=7764, ip=10.0.0.2)" in text.partition(USERS)[2]
    assert "^^^^^^^^^^^^^^^^^^^^^^^^^^^\n" not in text.partition(USERS)[2].split("host.py")[0]


def test_a_chained_exception_keeps_both_of_the_users_tracebacks_in_order() -> None:
    chained = (
        "Traceback (most recent call last):\n"
        + own("trainable/session.py", 127, "run", "call()")
        + user(3, "load", "open(path)")
        + "FileNotFoundError: data.csv\n\n"
        + "The above exception was the direct cause of the following exception:\n\n"
        + "Traceback (most recent call last):\n"
        + own("trainable/session.py", 127, "run", "call()")
        + user(9, "train", "raise RuntimeError('no data') from error")
        + "RuntimeError: no data\n"
    )
    users = user_frames_first(chained).partition(TUNECORE_FRAMES_LABEL)[0]
    assert users.index("FileNotFoundError") < users.index("direct cause") < users.index("line 9")
    assert OWN not in users
    assert failure_reason(user_frames_first(chained)) == "RuntimeError: no data"


def test_text_without_tunecore_frames_only_loses_its_colour_codes() -> None:
    assert user_frames_first(USERS) == USERS
    assert user_frames_first("\x1b[31mThe worker died\x1b[0m") == "The worker died"


# -- end to end ----------------------------------------------------------------------


def helper(x: object) -> None:
    raise ValueError(f"bad {x}")


def fails(config: dict[str, object]) -> None:
    tunecore.report({"loss": 1.0})
    helper(config["x"])


class FailingStep(tunecore.Trainable):
    def step(self) -> dict[str, float]:
        helper("in step")
        return {"loss": 1.0}


def test_error_txt_and_result_error_start_with_the_users_frames(tmp_path: Path) -> None:
    for trainable, expected in ((fails, "bad 1"), (FailingStep, "bad in step")):
        results = Tuner(
            trainable,
            param_space={"x": 1},
            tune_config=TuneConfig(),
            run_config=RunConfig(
                name=trainable.__name__,
                storage_path=str(tmp_path),
                verbose=0,
                executor="in_process",
            ),
        ).fit()
        (result,) = results
        assert result.status is TrialStatus.ERROR
        error = str(result.error)
        assert error.startswith(f'Traceback (most recent call last):\n  File "{HERE}", line ')
        users, label, own_frames = error.partition(TUNECORE_FRAMES_LABEL)
        assert label
        assert users.rstrip().endswith(f"ValueError: {expected}")
        assert TUNECORE_DIR not in users
        assert TUNECORE_DIR in own_frames
        assert "\x1b" not in error
        error_txt = (result.path / "error.txt").read_text()
        assert users in error_txt
