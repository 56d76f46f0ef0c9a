"""Properties of domains and the generator over random valid spaces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.search.support import at, drain, sampling_domains, spaces, uniforms, within
from tunecore.core.rng import Rng
from tunecore.core.search import BasicVariantGenerator, Domain, SamplingDomain
from tunecore.model.codec import from_msgpack, to_msgpack

seeds = st.integers(0, 2**64 - 1)
space_and_size = spaces()


@settings(max_examples=200)
@given(domain=sampling_domains, state=st.integers(0, 2**64 - 1))
def test_every_draw_lies_in_its_domain(domain: SamplingDomain, state: int) -> None:
    rng = Rng(state)
    for _ in range(20):
        rng, value = domain.sample(rng)
        assert within(domain, value), (domain, value)
        assert domain.is_valid(value)


@settings(max_examples=60, deadline=None)
@given(space_and_size, st.integers(1, 3), seeds)
def test_the_same_seed_gives_the_same_configs(
    space_and_size: tuple[dict[str, object], int], num_samples: int, seed: int
) -> None:
    space, _ = space_and_size
    first = drain(BasicVariantGenerator(space, num_samples=num_samples, seed=seed))
    second = drain(BasicVariantGenerator(space, num_samples=num_samples, seed=seed))
    assert first == second


@settings(max_examples=60, deadline=None)
@given(space_and_size, uniforms().filter(lambda u: u.high - u.low > 1e-3), seeds, seeds)
def test_different_seeds_give_different_continuous_draws(
    space_and_size: tuple[dict[str, object], int], domain: Domain, seed: int, other: int
) -> None:
    space, _ = space_and_size
    space = {**space, "continuous": domain}
    first = BasicVariantGenerator(space, seed=seed).suggest("t")[1]
    second = BasicVariantGenerator(space, seed=other).suggest("t")[1]
    assert first is not None
    assert second is not None
    assert (first.config["continuous"] == second.config["continuous"]) == (seed == other)


@settings(max_examples=60, deadline=None)
@given(space_and_size, st.integers(1, 3), seeds)
def test_every_value_lies_in_its_domain_and_constants_are_kept(
    space_and_size: tuple[dict[str, object], int], num_samples: int, seed: int
) -> None:
    space, _ = space_and_size
    generator = BasicVariantGenerator(space, num_samples=num_samples, seed=seed)
    parameters = (*generator.space.grid, *generator.space.sampled)
    paths = {"/".join(str(part) for part in p.path) for p in parameters}
    for suggestion in drain(generator):
        for parameter in parameters:
            assert within(parameter.domain, at(suggestion.config, parameter.path))
        assert set(suggestion.evaluated_params) == paths
        assert _constants(suggestion.config, space)


def _constants(config: object, space: object) -> bool:
    """Every non-domain leaf of the space is in the config unchanged."""
    if isinstance(space, dict):
        assert isinstance(config, dict)
        if list(space) == ["grid_search"]:
            return True
        return all(_constants(config[key], value) for key, value in space.items())
    if isinstance(space, list):
        assert isinstance(config, list)
        return all(_constants(c, s) for c, s in zip(config, space, strict=True))
    if isinstance(space, Domain):
        return True
    return config == space and type(config) is type(space)


@settings(max_examples=60, deadline=None)
@given(space_and_size, st.integers(1, 3), seeds)
def test_it_suggests_grid_size_times_num_samples_then_is_finished(
    space_and_size: tuple[dict[str, object], int], num_samples: int, seed: int
) -> None:
    space, grid_size = space_and_size
    generator = BasicVariantGenerator(space, num_samples=num_samples, seed=seed)
    assert generator.total == grid_size * num_samples
    count = 0
    while not generator.is_finished:
        generator, suggestion = generator.suggest(f"t{count}")
        assert suggestion is not None
        assert suggestion.experiment_tag.split("_")[0] == str(count)
        count += 1
    assert count == grid_size * num_samples
    assert generator.suggest("late")[1] is None


@settings(max_examples=60, deadline=None)
@given(space_and_size, st.integers(1, 3), seeds, st.data())
def test_the_state_round_trips_at_every_step_and_resumes_exactly(
    space_and_size: tuple[dict[str, object], int],
    num_samples: int,
    seed: int,
    data: st.DataObject,
) -> None:
    space, grid_size = space_and_size
    generator = BasicVariantGenerator(space, num_samples=num_samples, seed=seed)
    resume_at = data.draw(st.integers(0, grid_size * num_samples), label="resume at")
    expected = drain(generator)
    for step in range(grid_size * num_samples + 1):
        encoded = to_msgpack(generator)
        decoded = from_msgpack(encoded, BasicVariantGenerator)
        assert decoded == generator
        assert to_msgpack(decoded) == encoded
        if step == resume_at:
            assert drain(decoded, prefix="r") == expected[step:]
        generator, _ = generator.suggest(f"t{step}")
