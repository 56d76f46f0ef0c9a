"""`tunecore.search.hebo.HEBOSearch`, Ray Tune's HEBO searcher, driven as
the shell drives it. HEBO runs on torch: these tests run in the
`searchers_torch` nox session, and skip where HEBO is not installed."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

from tests.search.flat_space import EVERY_DOMAIN, SPACE, loss, run, value_at
from tests.search.resume_properties import crash_anywhere, restore_continues, same_log_bytes
from tunecore.core.search import parse_space
from tunecore.model import InvalidFieldError
from tunecore.search import create_searcher

pytest.importorskip("hebo", reason="HEBO is not installed (tunecore[hebo], on torch)")
logging.getLogger("pymoo").setLevel(logging.ERROR)

import torch  # noqa: E402 - after the skip
from hebo.design_space.design_space import DesignSpace  # noqa: E402

from tunecore.search.hebo import HEBOSearch  # noqa: E402

FEW = 5  # HEBO takes seconds per model-based suggestion: its first 3 are Sobol points


def searcher(seed: int = 3, space: dict[str, Any] | None = None, **kwargs: Any) -> HEBOSearch:
    """Set up as the Tuner sets it up: param space, then the seed."""
    kwargs.setdefault("max_concurrent", 1)
    found = HEBOSearch(metric="loss", mode="min", **kwargs)
    assert found.set_search_properties(None, None, dict(space or SPACE))
    found.use_seed(seed)
    return found


def test_every_domain_hebo_models_is_searched_within_it_and_keeps_its_type() -> None:
    space = {k: v for k, v in EVERY_DOMAIN.items() if k not in ("randn", "qrandn")}
    parsed = parse_space(space)
    found = searcher(space=space, max_concurrent=4)
    for step in range(4):
        config = found.suggest(f"t{step}")
        assert isinstance(config, dict)
        for parameter in parsed.sampled:
            value = value_at(config, parameter.path)
            assert parameter.domain.is_valid(value), (parameter, value)  # type: ignore[union-attr]
        assert config["nested"]["constant"] == "kept"
        assert config["one_int"] == 3


@pytest.mark.parametrize("domain", ["randn", "qrandn"])
def test_a_normal_domain_is_refused_naming_its_path(domain: str) -> None:
    with pytest.raises(InvalidFieldError, match=domain):
        searcher(space={domain: EVERY_DOMAIN[domain]})


def test_the_same_seed_gives_the_same_run_whatever_else_draws_from_the_global_generators() -> None:
    first = run(searcher(seed=5), FEW)
    np.random.seed(1)
    torch.manual_seed(2)
    assert run(searcher(seed=5), FEW) == first
    assert run(searcher(seed=6), 3) != first[:3]


def test_from_spec_replaying_the_same_asks_and_tells_suggests_what_the_original_does() -> None:
    original = searcher(seed=9, points_to_evaluate=[{"x": 1.0, "activation": "tanh"}])
    spec = original.to_spec()
    assert spec is not None
    rebuilt = HEBOSearch.from_spec(spec)
    for found in (original, rebuilt):
        assert run(found, 3)[0] == {"x": 1.0, "activation": "tanh", "steps": 100}
        found.suggest("errored")
        found.on_trial_complete("errored", None, error=True)
    assert rebuilt.suggest("next") == original.suggest("next")


def test_evaluated_rewards_are_told_not_suggested() -> None:
    found = searcher(points_to_evaluate=[{"x": 3.0, "activation": "tanh"}], evaluated_rewards=[0.0])
    assert found.suggest("t0") != {"x": 3.0, "activation": "tanh", "steps": 100}
    with pytest.raises(InvalidFieldError, match="evaluated_rewards"):
        HEBOSearch(points_to_evaluate=[{"x": 3.0}], evaluated_rewards=[0.0, 1.0])


def test_a_batch_is_handed_out_whole_and_the_next_waits_for_it() -> None:
    found = searcher(max_concurrent=2)
    assert found.suggest("a") is not None
    assert found.suggest("b") is not None
    assert found.suggest("c") is None  # the batch is out
    found.on_trial_complete("a", {"loss": 1.0})
    assert found.suggest("c") is None  # Ray's: until the whole batch has ended
    found.on_trial_complete("b", {"loss": 2.0})
    assert found.suggest("c") is not None


def test_a_limiters_bound_is_its_batch_size() -> None:
    found = HEBOSearch(metric="loss", mode="min")
    assert found.set_max_concurrency(3)
    with pytest.raises(InvalidFieldError, match="max_concurrent"):
        found.set_max_concurrency(0)


def test_a_design_space_of_hebos_own_is_searched_as_given_but_has_no_spec() -> None:
    space = DesignSpace().parse([{"name": "x", "type": "num", "lb": 0, "ub": 1}])
    found = HEBOSearch(space, metric="loss", mode="min", max_concurrent=1)
    config = found.suggest("t0")
    assert isinstance(config, dict)
    assert 0 <= config["x"] <= 1
    with pytest.warns(UserWarning, match="DesignSpace"):
        assert found.to_spec() is None


def test_bad_arguments_are_refused_naming_them() -> None:
    with pytest.raises(InvalidFieldError, match=r"HEBOSearch\.space"):
        HEBOSearch(space=[1, 2])
    with pytest.raises(InvalidFieldError, match="random_state_seed"):
        HEBOSearch(random_state_seed="1")  # type: ignore[arg-type]


def test_create_searcher_knows_it() -> None:
    assert isinstance(create_searcher("hebo", metric="loss", mode="min"), HEBOSearch)


def test_it_improves_on_its_random_start() -> None:
    found = searcher(seed=2)
    losses = [loss(config) for config in run(found, 7)]
    assert min(losses[3:]) < min(losses[:3])


# -- exact resume, as property tests ------------------------------------------------

test_after_a_crash_anywhere_the_rebuilt_search_suggests_what_the_run_did = crash_anywhere(
    HEBOSearch, samples=6, examples=2
)
test_the_same_seed_gives_the_same_log_bytes_with_four_concurrent = same_log_bytes(
    HEBOSearch, samples=6
)
test_a_restored_run_continues_with_exactly_the_uninterrupted_runs_suggestions = restore_continues(
    HEBOSearch, samples=5, crash_after=2
)
