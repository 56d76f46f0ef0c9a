"""BasicVariantGenerator as a searcher: laziness, finishing, concurrency, resume."""

from __future__ import annotations

import time

import msgspec
import pytest

from tests.core.search.support import drain
from tunecore.core.search import (
    UNBOUNDED,
    BasicVariantGenerator,
    ParamSpace,
    SearchPolicy,
    grid_search,
    loguniform,
    sample_from,
    uniform,
)
from tunecore.model import InvalidFieldError, Mode
from tunecore.model.codec import from_msgpack, to_msgpack

SPACE: dict[str, object] = {
    "lr": loguniform(1e-4, 1e-1),
    "momentum": grid_search([0.8, 0.9]),
    "opt": {"beta": uniform(0.5, 1.0), "name": "adam"},
}


def test_it_is_a_searcher() -> None:
    searcher: SearchPolicy = BasicVariantGenerator(SPACE)
    assert not searcher.is_finished


def test_it_suggests_grid_times_num_samples_then_none_and_is_finished() -> None:
    generator = BasicVariantGenerator(SPACE, num_samples=3)
    assert generator.total == 6
    for index in range(6):
        assert not generator.is_finished
        generator, suggestion = generator.suggest(f"t{index}")
        assert suggestion is not None
        assert suggestion.experiment_tag.startswith(f"{index}_")
    assert generator.is_finished
    after, suggestion = generator.suggest("t6")
    assert suggestion is None
    assert after is generator


def test_construction_parses_the_space_and_seeds_the_rng() -> None:
    generator = BasicVariantGenerator(SPACE, seed=42)
    assert isinstance(generator.param_space, ParamSpace)
    assert generator.rng is not None
    assert generator.space.grid_size == 2


def test_the_same_seed_gives_the_same_configs_and_another_seed_others() -> None:
    first = drain(BasicVariantGenerator(SPACE, num_samples=4, seed=1))
    again = drain(BasicVariantGenerator(SPACE, num_samples=4, seed=1))
    other = drain(BasicVariantGenerator(SPACE, num_samples=4, seed=2))
    assert first == again
    assert [s.config["lr"] for s in first] != [s.config["lr"] for s in other]


def test_a_huge_grid_is_never_materialised() -> None:
    space: dict[str, object] = {f"p{i:02}": grid_search(list(range(10))) for i in range(12)}
    space["x"] = uniform(0, 1)
    generator = BasicVariantGenerator(space, num_samples=1000)
    assert generator.total == 10**12 * 1000
    started = time.perf_counter()
    for index in range(200):
        generator, suggestion = generator.suggest(f"t{index}")
        assert suggestion is not None
    assert time.perf_counter() - started < 2.0
    assert suggestion is not None
    assert suggestion.config["p00"] == 9
    assert suggestion.config["p01"] == 9
    assert suggestion.config["p02"] == 1
    assert suggestion.config["p03"] == 0
    assert len(to_msgpack(generator)) < 5000


def test_an_unbounded_generator_never_finishes() -> None:
    generator = BasicVariantGenerator({"x": uniform(0, 1)}, num_samples=UNBOUNDED)
    assert generator.total is None
    for index in range(100):
        generator, suggestion = generator.suggest(f"t{index}")
        assert suggestion is not None
    assert not generator.is_finished


def test_max_concurrent_holds_suggestions_until_a_trial_completes() -> None:
    generator = BasicVariantGenerator(SPACE, num_samples=5, max_concurrent=2)
    generator, first = generator.suggest("a")
    generator, second = generator.suggest("b")
    assert first is not None
    assert second is not None
    held, none = generator.suggest("c")
    assert none is None
    assert held is generator
    generator = generator.on_trial_complete("a", {"loss": 1.0}, error=False)
    assert generator.live == ("b",)
    generator, third = generator.suggest("c")
    assert third is not None
    assert third.experiment_tag.startswith("2_")
    assert generator.on_trial_complete("unknown") is generator


def test_without_max_concurrent_nothing_is_tracked() -> None:
    generator, _ = BasicVariantGenerator(SPACE).suggest("a")
    assert generator.live == ()


def test_results_and_the_objective_change_nothing() -> None:
    generator = BasicVariantGenerator(SPACE)
    assert generator.with_objective("loss", Mode.MIN) is generator
    assert generator.on_trial_result("a", {"loss": 1.0}) is generator
    assert generator.on_trial_complete("a", None, error=True) is generator


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"num_samples": 0}, "BasicVariantGenerator.num_samples"),
        ({"num_samples": -2}, "BasicVariantGenerator.num_samples"),
        ({"max_concurrent": -1}, "BasicVariantGenerator.max_concurrent"),
        ({"seed": 1.5}, "BasicVariantGenerator.seed"),
    ],
)
def test_invalid_settings_are_rejected(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidFieldError) as raised:
        BasicVariantGenerator(SPACE, **kwargs)  # type: ignore[arg-type]
    assert raised.value.field == field


def test_it_round_trips_through_msgpack_and_resumes_exactly() -> None:
    generator = BasicVariantGenerator(SPACE, num_samples=3, seed=9)
    generator, _ = generator.suggest("t0")
    generator, _ = generator.suggest("t1")
    decoded = from_msgpack(to_msgpack(generator), BasicVariantGenerator)
    assert decoded == generator
    assert drain(decoded, "r") == drain(generator, "r")


def test_live_trials_survive_the_round_trip() -> None:
    generator = BasicVariantGenerator(SPACE, num_samples=3, max_concurrent=2)
    generator, _ = generator.suggest("t0")
    generator, _ = generator.suggest("t1")
    decoded = from_msgpack(to_msgpack(generator), BasicVariantGenerator)
    assert decoded.live == ("t0", "t1")
    assert decoded.suggest("t2")[1] is None
    assert decoded.on_trial_complete("t0").suggest("t2")[1] is not None


def test_a_space_with_sample_from_encodes_and_asks_for_the_function_values() -> None:
    generator = BasicVariantGenerator({"a": uniform(0, 1), "b": sample_from(lambda s: s["a"])})
    decoded = from_msgpack(to_msgpack(generator), BasicVariantGenerator)
    assert decoded == generator
    assert decoded.suggest("t0")[1] is None
    wanted = decoded.wanted()
    assert wanted is not None
    assert wanted.paths == (("b",),)
    generator, suggestion = decoded.with_values(wanted.key, [wanted.config["a"]]).suggest("t0")
    assert suggestion is not None
    assert suggestion.config["a"] == suggestion.config["b"]


def test_decoding_rejects_an_invalid_state() -> None:
    payload = to_msgpack(msgspec.structs.replace(BasicVariantGenerator(SPACE), num_samples=2))
    tampered = payload.replace(b"num_samples\x02", b"num_samples\x00")
    with pytest.raises(msgspec.ValidationError, match="num_samples"):
        from_msgpack(tampered, BasicVariantGenerator)
