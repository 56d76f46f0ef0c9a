"""Naming user code for persisted state and finding it again: registered
names and import paths, and the errors for references that lead nowhere."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

import pytest

from tests.shell.trainable import targets
from tunecore.model import JsonDict
from tunecore.shell.trainable import (
    ClassTrainable,
    FunctionTrainable,
    TrialContext,
    make_worker_trainable,
    register_trainable,
    registry,
    report,
    resolve_trainable,
    trainable_name,
)


@pytest.fixture(autouse=True)
def empty_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_registry", {})


def local_train(config: JsonDict) -> None:
    report({"x": 1})


def test_a_registered_name_resolves_to_its_trainable() -> None:
    register_trainable("mine", local_train)
    register_trainable("counter", targets.Counter)
    assert resolve_trainable("mine") is local_train
    assert resolve_trainable("counter") is targets.Counter


def test_registering_a_name_again_replaces_it() -> None:
    register_trainable("mine", local_train)
    register_trainable("mine", targets.train_fn)
    assert resolve_trainable("mine") is targets.train_fn


def test_an_import_path_resolves() -> None:
    assert resolve_trainable("tests.shell.trainable.targets:train_fn") is targets.train_fn
    assert resolve_trainable("tests.shell.trainable.targets:Counter") is targets.Counter
    assert resolve_trainable("tests.shell.trainable.targets:Holder.nested") is (
        targets.Holder.nested
    )


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("nobody", "unknown trainable 'nobody': it is not a registered name (registered: mine)"),
        ("no_such_package.module:fn", "names the module 'no_such_package.module', which cannot"),
        ("tests.shell.trainable.nothing:fn", "names the module 'tests.shell.trainable.nothing'"),
        (
            "tests.shell.trainable.targets:missing",
            "the module 'tests.shell.trainable.targets' has no 'missing'",
        ),
        (":fn", "must be 'package.module:qualname'"),
        ("tests.shell.trainable.targets:", "must be 'package.module:qualname'"),
    ],
)
def test_references_that_lead_nowhere_are_clear_errors(reference: str, message: str) -> None:
    register_trainable("mine", local_train)
    with pytest.raises(ValueError, match=re.escape(message)):
        resolve_trainable(reference)


def test_a_module_that_fails_to_import_is_reported_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_target_module.py").write_text("import a_module_that_is_not_there\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(ValueError, match="importing the module") as refused:
            resolve_trainable("broken_target_module:fn")
        assert "importing the module 'broken_target_module' of" in str(refused.value)
        assert "a_module_that_is_not_there" in str(refused.value)
    finally:
        sys.modules.pop("broken_target_module", None)


def test_an_import_path_to_something_else_is_refused() -> None:
    with pytest.raises(TypeError, match="is of type int; expected a function"):
        resolve_trainable("tests.shell.trainable.targets:not_a_trainable")
    with pytest.raises(TypeError, match="is a class but not a subclass of Trainable"):
        resolve_trainable("tests.shell.trainable.targets:Holder")


def test_a_ray_tune_trainable_is_refused_saying_how_to_run_it() -> None:
    """RLlib's Tune examples pass an algorithm class (`config.algo_class`,
    built on Ray Tune's own `Trainable`): the error says so, and how to run
    it in a function trainable; any other class gets the plain message."""
    pytest.importorskip("fsspec")  # ray.tune needs it; ray[tune], which tunecore depends on, has it
    ray_trainable = pytest.importorskip("ray.tune.trainable")

    class Algorithm(ray_trainable.Trainable):  # type: ignore[misc,name-defined]
        pass

    with pytest.raises(TypeError, match=r"subclasses Ray Tune.s own ray\.tune\.Trainable") as error:
        register_trainable("algo", Algorithm)
    assert "custom_experiment.py" in str(error.value)
    with pytest.raises(TypeError) as plain:
        register_trainable("bad", dict)
    assert "Ray Tune's own" not in str(plain.value)


def test_registering_something_that_is_not_a_trainable_is_refused() -> None:
    def two_required(config: JsonDict, data: int) -> None: ...

    with pytest.raises(ValueError, match=r"has the parameters \(config, data\)"):
        register_trainable("bad", two_required)
    with pytest.raises(TypeError, match="not a subclass of Trainable"):
        register_trainable("bad", dict)
    with pytest.raises(ValueError, match="without ':'"):
        register_trainable("a:b", local_train)
    with pytest.raises(ValueError, match="a non-empty string"):
        register_trainable("", local_train)
    assert registry._registry == {}


def test_an_importable_trainable_is_named_by_its_import_path() -> None:
    assert trainable_name(targets.train_fn) == "tests.shell.trainable.targets:train_fn"
    assert trainable_name(targets.Counter) == "tests.shell.trainable.targets:Counter"
    assert registry._registry == {}


def test_other_trainables_are_registered_under_their_qualname() -> None:
    def make() -> object:
        def train(config: JsonDict) -> None:
            report({"x": 1})

        return train

    first, second = make(), make()
    name = trainable_name(first)  # type: ignore[arg-type]
    assert (
        name
        == "test_other_trainables_are_registered_under_their_qualname.<locals>.make.<locals>.train"
    )
    assert trainable_name(first) == name  # type: ignore[arg-type]
    assert trainable_name(second) == f"{name}_2"  # type: ignore[arg-type]
    assert resolve_trainable(name) is first
    assert resolve_trainable(f"{name}_2") is second


def test_a_partial_is_registered_under_the_name_of_its_function() -> None:
    """Ray names `partial(train, cfg=...)` by `train` (its experiment, its
    trials); the qualified name of `partial` itself says nothing."""
    first, second = functools.partial(local_train), functools.partial(local_train)
    assert trainable_name(first) == "local_train"
    assert trainable_name(second) == "local_train_2"
    assert resolve_trainable("local_train") is first


def test_a_registered_trainable_keeps_its_registered_name() -> None:
    lam = lambda config: report({"x": 1})  # noqa: E731
    register_trainable("my_lambda", lam)
    assert trainable_name(lam) == "my_lambda"


def test_make_worker_trainable_picks_the_api(context: TrialContext) -> None:
    register_trainable("counter", targets.Counter)
    by_name = make_worker_trainable("counter", {}, context)
    by_path = make_worker_trainable("tests.shell.trainable.targets:train_fn", {"x": 3}, context)
    by_object = make_worker_trainable(targets.train_fn, {"x": 4}, context)
    try:
        assert isinstance(by_name, ClassTrainable)
        assert by_name.train()["count"] == 1
        assert isinstance(by_path, FunctionTrainable)
        assert by_path.train()["value"] == 3
        assert by_object.train()["value"] == 4
    finally:
        for trainable in (by_name, by_path, by_object):
            trainable.stop()
