"""BasicVariantGenerator's Ray options: points_to_evaluate, constant_grid_search,
and the function values it asks the shell for (sample_from)."""

from __future__ import annotations

import math

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.search.support import drain, scalars, spaces
from tunecore.core.experiment import ExperimentConfig, new_experiment, step
from tunecore.core.search import (
    BasicVariantGenerator,
    ConcurrencyLimiter,
    Repeater,
    choice,
    grid_search,
    randint,
    sample_from,
    uniform,
)
from tunecore.core.search.base import ValuesWanted, take_values
from tunecore.model import InvalidFieldError, Rejection, ValuesDrawn
from tunecore.model.codec import from_msgpack, to_msgpack

seeds = st.integers(0, 2**63)

RAY_DOC_SPACE = {"a": grid_search([1, 2]), "b": randint(0, 3)}


def test_rays_documented_example_gives_six_trials_from_four_samples() -> None:
    generator = BasicVariantGenerator(
        RAY_DOC_SPACE,
        num_samples=4,
        seed=0,
        points_to_evaluate=[{"a": 2, "b": 2}, {"a": 1}, {"b": 2}],
    )
    assert generator.total == 6
    got = [(s.config["a"], s.config["b"]) for s in drain(generator)]
    assert got[0] == (2, 2)
    assert got[1][0] == 1
    assert got[2:4] == [(1, 2), (2, 2)]
    assert [a for a, _ in got[4:]] == [1, 2]


def test_more_points_than_samples_are_all_evaluated() -> None:
    points = [{"b": 0}, {"b": 1}, {"b": 2}]
    generator = BasicVariantGenerator(
        {"b": randint(0, 3)}, num_samples=1, points_to_evaluate=points
    )
    assert [s.config["b"] for s in drain(generator)] == [0, 1, 2]


def test_a_point_sets_nested_values_and_its_values_are_in_the_tag() -> None:
    space = {"opt": {"lr": uniform(0, 1), "kind": choice(["sgd", "adam"])}}
    generator = BasicVariantGenerator(space, points_to_evaluate=[{"opt": {"lr": 0.5}}])
    (first,) = drain(generator)
    assert first.config["opt"]["lr"] == 0.5  # type: ignore[index, call-overload]
    assert first.evaluated_params["opt/lr"] == 0.5
    assert "lr=0.5" in first.experiment_tag


def test_a_point_inside_a_domain_is_an_error_naming_the_point() -> None:
    with pytest.raises(InvalidFieldError, match=r"points_to_evaluate\[0\]\['a'\]\['x'\]"):
        BasicVariantGenerator({"a": choice([1, 2])}, points_to_evaluate=[{"a": {"x": 1}}])


def test_points_must_be_dicts_of_json() -> None:
    with pytest.raises(InvalidFieldError, match=r"points_to_evaluate\[1\]"):
        BasicVariantGenerator({"a": 1}, points_to_evaluate=[{"a": 1}, 3])  # type: ignore[list-item]


def test_ray_style_construction_takes_the_space_from_with_space() -> None:
    generator = BasicVariantGenerator(points_to_evaluate=[{"a": 2}], constant_grid_search=True)
    with_space = generator.with_space(RAY_DOC_SPACE, num_samples=2, seed=5)
    assert with_space.points == ({"a": 2},)
    assert with_space.constant_grid_search is True
    assert with_space.seed == 5
    with pytest.raises(InvalidFieldError, match="param_space"):
        _ = generator.total


def test_unused_options_are_not_encoded_so_older_logs_keep_their_bytes() -> None:
    encoded = to_msgpack(BasicVariantGenerator({"a": 1}, seed=0))
    for name in (b"points_to_evaluate", b"constant_grid_search", b"drawn"):
        assert name not in encoded


def test_a_generator_with_functions_waits_for_their_values_and_rejects_others() -> None:
    space = {"x": grid_search([1, 2]), "y": sample_from(lambda spec: spec.config.x * 10)}
    generator = BasicVariantGenerator(space)
    assert generator.suggest("t0")[1] is None
    wanted = generator.wanted()
    assert wanted == ValuesWanted(key=0, paths=(("y",),), config={"x": 1, "y": None})
    assert take_values(generator, 1, [10]) is None  # another variant's key
    assert take_values(generator, 0, [10, 20]) is None  # not one value per path
    ready = take_values(generator, 0, [10])
    assert ready is not None
    assert ready.wanted() is None
    after, suggestion = ready.suggest("t0")
    assert suggestion is not None
    assert suggestion.config == {"x": 1, "y": 10}
    assert suggestion.experiment_tag == "0_x=1,y=10"
    assert after.wanted() == ValuesWanted(key=1, paths=(("y",),), config={"x": 2, "y": None})


# -- properties ------------------------------------------------------------------------------------


@st.composite
def space_and_point(draw: st.DrawFn) -> tuple[dict[str, object], dict[str, object], int]:
    """A space, a point setting some of its top-level keys (or new ones), and
    the number of variants the point gives (the grids it leaves)."""
    space, _ = draw(spaces())
    keys = sorted(space)
    chosen = draw(st.lists(st.sampled_from(keys), unique=True)) if keys else []
    point: dict[str, object] = {key: draw(scalars) for key in chosen}
    if draw(st.booleans()):
        point["extra"] = draw(scalars)
    generator = BasicVariantGenerator(space)
    left = [
        len(p.domain.values)  # type: ignore[union-attr]
        for p in generator.space.grid
        if p.path[0] not in point
    ]
    return space, point, math.prod(left)


@settings(max_examples=80, deadline=None)
@given(space_and_point(), st.integers(1, 3), seeds)
def test_a_point_comes_first_with_its_values_and_the_rest_of_the_space(
    case: tuple[dict[str, object], dict[str, object], int], num_samples: int, seed: int
) -> None:
    space, point, point_variants = case
    generator = BasicVariantGenerator(
        space, num_samples=num_samples, seed=seed, points_to_evaluate=[point]
    )
    plain = BasicVariantGenerator(space, num_samples=1)
    assert generator.total == point_variants + plain.space.grid_size * (num_samples - 1)
    suggestions = drain(generator)
    assert len(suggestions) == generator.total
    for suggestion in suggestions[:point_variants]:
        for key, value in point.items():
            assert suggestion.config[key] == value
        assert set(space) <= set(suggestion.config)


@settings(max_examples=60, deadline=None)
@given(spaces(), st.integers(1, 3), seeds)
def test_constant_grid_search_shares_a_rounds_random_values_across_its_grid(
    space_and_size: tuple[dict[str, object], int], num_samples: int, seed: int
) -> None:
    space, grid_size = space_and_size
    space = {**space, "random": uniform(0, 1)}
    generator = BasicVariantGenerator(
        space, num_samples=num_samples, seed=seed, constant_grid_search=True
    )
    suggestions = drain(generator)
    assert len(suggestions) == grid_size * num_samples
    rounds = [suggestions[i : i + grid_size] for i in range(0, len(suggestions), grid_size)]
    for round_ in rounds:
        assert len({s.config["random"] for s in round_}) == 1
    plain = drain(BasicVariantGenerator(space, num_samples=num_samples, seed=seed))
    assert rounds[0][0] == plain[0]  # the first variant draws as without the option


@settings(max_examples=60, deadline=None)
@given(space_and_point(), st.booleans(), st.integers(0, 6), seeds)
def test_a_decoded_generator_with_options_goes_on_exactly(
    case: tuple[dict[str, object], dict[str, object], int],
    constant: bool,
    stop_after: int,
    seed: int,
) -> None:
    space, point, _ = case
    generator = BasicVariantGenerator(
        space,
        num_samples=3,
        seed=seed,
        points_to_evaluate=[point],
        constant_grid_search=constant,
    )
    for index in range(stop_after):
        generator, suggestion = generator.suggest(f"t{index}")
        if suggestion is None:
            break
    decoded = from_msgpack(to_msgpack(generator), BasicVariantGenerator)
    assert decoded == generator
    assert drain(decoded) == drain(generator)
    assert msgspec.structs.asdict(decoded)["points_to_evaluate"] == generator.points_to_evaluate


def test_the_step_function_takes_logged_values_and_rejects_unasked_ones() -> None:
    space = {"x": grid_search([1, 2]), "y": sample_from(lambda spec: spec.config.x * 10)}
    state = new_experiment(
        ExperimentConfig(trainable_name="t"), searcher=BasicVariantGenerator(space)
    )
    stale = step(state, ValuesDrawn(at=0.0, owner="searcher", key=1, values=[20]))
    assert isinstance(stale, Rejection)
    assert isinstance(
        step(state, ValuesDrawn(at=0.0, owner="scheduler", key=0, values=[1])), Rejection
    )
    stepped = step(state, ValuesDrawn(at=0.0, owner="searcher", key=0, values=[10]))
    assert not isinstance(stepped, Rejection)
    after, _ = stepped
    (trial,) = after.trials.values()
    assert trial.spec.config == {"x": 1, "y": 10}


def test_random_state_is_rays_name_for_the_seed() -> None:
    space = {"a": uniform(0, 1)}
    assert drain(BasicVariantGenerator(space, random_state=3, num_samples=2)) == drain(
        BasicVariantGenerator(space, seed=3, num_samples=2)
    )
    assert b"random_state" not in to_msgpack(BasicVariantGenerator(space, random_state=3))


def test_wrappers_pass_the_function_values_through() -> None:
    space = {"x": grid_search([1, 2]), "y": sample_from(lambda spec: spec.config.x + 1)}
    for wrapped in (
        ConcurrencyLimiter(BasicVariantGenerator(space), max_concurrent=1),
        Repeater(BasicVariantGenerator(space), repeat=2, metric="m"),
    ):
        assert wrapped.suggest("t0")[1] is None
        wanted = wrapped.wanted()
        assert wanted is not None
        assert wanted.paths == (("y",),)
        ready = take_values(wrapped, wanted.key, [2])
        assert ready is not None
        suggestion = ready.suggest("t0")[1]
        assert suggestion is not None
        assert (suggestion.config["x"], suggestion.config["y"]) == (1, 2)
