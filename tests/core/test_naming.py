"""Trial names (the seed's `_trainable_name`) and error.txt entries
(the seed's `write_error_log`), formatted in UTC from event timestamps."""

from __future__ import annotations

from typing import Any

import pytest

from tunecore.core import trial_name
from tunecore.core.naming import date_string, error_entry
from tunecore.model import TrialSpec

# 2023-11-14 22:13:20 UTC
AT = 1_700_000_000.0


def spec(**fields: Any) -> TrialSpec:
    fields.setdefault("trial_id", "abc123")
    fields.setdefault("trainable_name", "train_fn")
    return TrialSpec(**fields)


def test_the_name_is_the_trainable_and_the_trial_id() -> None:
    assert trial_name(spec()) == "train_fn_abc123"


def test_the_name_without_the_trial_id_is_the_trainable() -> None:
    assert trial_name(spec(), include_trial_id=False) == "train_fn"


def test_the_env_in_the_config_joins_the_name() -> None:
    named = spec(config={"env": "CartPole-v1", "lr": 0.1})
    assert trial_name(named) == "train_fn_CartPole-v1_abc123"
    assert trial_name(named, include_trial_id=False) == "train_fn_CartPole-v1"


def test_a_trainable_given_by_import_path_is_named_by_its_object() -> None:
    named = spec(trainable_name="pkg.module:train")
    assert trial_name(named) == "train_abc123"
    assert trial_name(named, include_trial_id=False) == "train"


@pytest.mark.parametrize(
    ("recorded", "shown"),
    [
        ("with_parameters(train)", "train"),
        ("with_parameters(train)_2", "train"),
        ("with_resources(with_parameters(pkg.module:train)_3)_12", "train"),
        ("train_2", "train_2"),  # a function may be named so: only a wrapper's number goes
        ("with_parameters(train)_x", "with_parameters(train)_x"),
    ],
)
def test_a_wrapped_trainable_is_named_by_what_it_wraps(recorded: str, shown: str) -> None:
    """As Ray names it; a second `with_parameters(train)` in one process is
    recorded numbered (`trainable_name`), and named `train` all the same."""
    assert trial_name(spec(trainable_name=recorded), include_trial_id=False) == shown


@pytest.mark.parametrize(
    ("recorded", "shown"),
    [
        ("run_tuning.<locals>.trial_wrapper", "trial_wrapper"),
        ("run_tuning.<locals>.trial_wrapper_2", "trial_wrapper_2"),
        ("main.<locals>.outer.<locals>.train", "train"),
        ("with_parameters(run.<locals>.train)_2", "train"),
        ("pkg.module:factory.<locals>.train", "train"),
        ("<lambda>", "lambda"),
        ("tune_agent.<locals>.<lambda>", "lambda"),
        ("<lambda>_2", "lambda"),
    ],
)
def test_a_function_defined_in_a_function_is_named_by_its_own_name(
    recorded: str, shown: str
) -> None:
    """As Ray names it (`__name__`, and `lambda` for a lambda): a closure
    defined in `main()` or in a Ray task, or a lambda given to `tune.run`,
    is recorded by its qualified name (docs/ray-examples.md #110, #111)."""
    assert trial_name(spec(trainable_name=recorded), include_trial_id=False) == shown


def test_every_slash_is_replaced_so_the_name_can_name_a_file() -> None:
    named = spec(trainable_name="pkg/train", config={"env": "ns/Env"}, trial_id="a/b")
    assert trial_name(named) == "pkg_train_ns_Env_a_b"


@pytest.mark.parametrize("include_trial_id", [True, False])
def test_a_custom_name_wins(include_trial_id: bool) -> None:
    named = spec(custom_name="my-trial", config={"env": "CartPole-v1"})
    assert trial_name(named, include_trial_id=include_trial_id) == "my-trial"


def test_date_string_is_utc() -> None:
    assert date_string(0.0) == "1970-01-01_00-00-00"
    assert date_string(AT) == "2023-11-14_22-13-20"


def test_date_string_drops_fractions_of_a_second() -> None:
    assert date_string(AT + 0.999) == "2023-11-14_22-13-20"


def test_error_entry_format() -> None:
    assert error_entry(1, AT, "Traceback: boom") == (
        "Failure # 1 (occurred at 2023-11-14_22-13-20)\nTraceback: boom\n"
    )


def test_error_entry_keeps_a_multi_line_error_as_is() -> None:
    error = "Traceback (most recent call last):\n  File x\nValueError: bad"
    assert error_entry(3, 0.0, error) == (
        "Failure # 3 (occurred at 1970-01-01_00-00-00)\n"
        "Traceback (most recent call last):\n  File x\nValueError: bad\n"
    )
