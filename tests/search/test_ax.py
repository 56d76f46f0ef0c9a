"""`tunecore.search.ax.AxSearch`, Ray Tune's Ax searcher on Ax's `Client`,
driven as the shell drives it. Ax runs on torch (BoTorch): these tests run
in the `searchers_torch` nox session, and skip where Ax is not installed."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

from tests.search.flat_space import EVERY_DOMAIN, SPACE, run, value_at
from tests.search.resume_properties import crash_anywhere, restore_continues, same_log_bytes
from tunecore.core.search import parse_space
from tunecore.model import InvalidFieldError
from tunecore.search import create_searcher

pytest.importorskip("ax", reason="Ax is not installed (tunecore[ax], on torch)")
logging.getLogger("ax").setLevel(logging.WARNING)

import torch  # noqa: E402 - after the skip
from ax.api.client import Client  # noqa: E402
from ax.api.configs import RangeParameterConfig  # noqa: E402

from tunecore.search.ax import AxSearch  # noqa: E402

FEW = 7  # Ax's first 5 are Sobol points; then BoTorch, seconds per suggestion


def searcher(seed: int = 3, space: dict[str, Any] | None = None, **kwargs: Any) -> AxSearch:
    """Set up as the Tuner sets it up: param space, then the seed."""
    found = AxSearch(metric="loss", mode="min", **kwargs)
    assert found.set_search_properties(None, None, dict(space or SPACE))
    found.use_seed(seed)
    return found


def test_every_domain_ax_models_is_searched_within_it_and_keeps_its_type() -> None:
    space = {k: v for k, v in EVERY_DOMAIN.items() if k not in ("randn", "qrandn")}
    parsed = parse_space(space)
    found = searcher(space=space)
    for step in range(3):
        config = found.suggest(f"t{step}")
        assert isinstance(config, dict)
        for parameter in parsed.sampled:
            value = value_at(config, parameter.path)
            assert parameter.domain.is_valid(value), (parameter, value)  # type: ignore[union-attr]
        assert config["nested"]["constant"] == "kept"


def test_a_normal_domain_is_refused_naming_its_path() -> None:
    with pytest.raises(InvalidFieldError, match="randn"):
        searcher(space={"randn": EVERY_DOMAIN["randn"]})


def test_the_same_seed_gives_the_same_run_whatever_else_draws_from_the_global_generators() -> None:
    first = run(searcher(seed=5), FEW)
    np.random.seed(1)
    torch.manual_seed(2)
    assert run(searcher(seed=5), FEW) == first
    assert run(searcher(seed=6), 2) != first[:2]


def test_from_spec_replaying_the_same_asks_and_tells_suggests_what_the_original_does() -> None:
    original = searcher(seed=9, points_to_evaluate=[{"x": 1.0, "activation": "tanh"}])
    spec = original.to_spec()
    assert spec is not None
    rebuilt = AxSearch.from_spec(spec)
    for found in (original, rebuilt):
        assert run(found, 2)[0] == {"x": 1.0, "activation": "tanh", "steps": 100}
        found.suggest("errored")
        found.on_trial_complete("errored", None, error=True)
        found.suggest("early")
        found.on_trial_complete("early", None)
    assert rebuilt.suggest("next") == original.suggest("next")


def test_rays_own_ax_space_with_constraints_as_rays_example_writes_it() -> None:
    parameters: list[dict[str, Any]] = [
        {"name": "x1", "type": "range", "bounds": [0.0, 1.0]},
        {"name": "x2", "type": "range", "bounds": [0.0, 1.0]},
        {"name": "iterations", "type": "fixed", "value": 3},
        {"name": "kind", "type": "choice", "values": ["a", "b"]},
    ]
    found = AxSearch(
        parameters,
        metric="score",
        mode="max",
        parameter_constraints=["x1 + x2 <= 1.0"],
        outcome_constraints=["l2norm <= 1.25"],
    )
    found.use_seed(1)
    for step in range(3):
        config = found.suggest(f"t{step}")
        assert isinstance(config, dict)
        assert config["iterations"] == 3
        assert config["x1"] + config["x2"] <= 1.0 + 1e-9
        assert config["kind"] in ("a", "b")
        found.on_trial_complete(f"t{step}", {"score": config["x1"], "l2norm": 1.0})
    spec = found.to_spec()
    assert spec is not None
    assert spec["native_space"] == parameters
    found.suggest("t9")
    with pytest.raises(RuntimeError, match="l2norm"):
        found.on_trial_complete("t9", {"score": 1.0})


def test_a_client_of_the_users_is_driven_as_configured_but_has_no_spec() -> None:
    client = Client(random_seed=1)
    client.configure_experiment(
        parameters=[RangeParameterConfig(name="x", bounds=(0.0, 1.0), parameter_type="float")]
    )
    client.configure_optimization(objective="-loss")
    found = AxSearch(ax_client=client, metric="loss", mode="min")
    config = found.suggest("t0")
    assert isinstance(config, dict)
    assert 0 <= config["x"] <= 1
    found.on_trial_complete("t0", {"loss": 0.5})
    with pytest.warns(UserWarning, match="ax_client"):
        assert found.to_spec() is None
    with pytest.raises(ValueError, match="ax_client"):
        AxSearch({"x": EVERY_DOMAIN["uniform"]}, ax_client=client, metric="loss", mode="min")
    with pytest.raises(InvalidFieldError, match="metric"):
        AxSearch(ax_client=client)


def test_an_axclient_argument_is_refused_naming_it() -> None:
    with pytest.raises(InvalidFieldError, match="enforce_sequential_optimization"):
        AxSearch(enforce_sequential_optimization=False)


def test_create_searcher_knows_it() -> None:
    assert isinstance(create_searcher("ax", metric="loss", mode="min"), AxSearch)


# -- exact resume, as property tests ------------------------------------------------

test_after_a_crash_anywhere_the_rebuilt_search_suggests_what_the_run_did = crash_anywhere(
    AxSearch, samples=7, examples=2
)
test_the_same_seed_gives_the_same_log_bytes_with_four_concurrent = same_log_bytes(
    AxSearch, samples=7
)
test_a_restored_run_continues_with_exactly_the_uninterrupted_runs_suggestions = restore_continues(
    AxSearch, samples=7, crash_after=3
)
