"""Hypothesis strategies for the model's structs.

Floats are finite here: JSON has no NaN or infinity (msgspec writes null),
so the exact JSON round trip only holds for finite numbers. NaN metrics are
covered separately by the msgpack tests.
"""

from __future__ import annotations

from hypothesis import strategies as st

from tunecore.model import (
    CheckpointPolicy,
    CheckpointRef,
    CheckpointStorage,
    JsonDict,
    JsonValue,
    Location,
    Mode,
    Resources,
    TrialSpec,
)
from tunecore.model.resources import STRATEGIES

names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12
)
metric_names = st.sampled_from(["loss", "accuracy", "score", "lr", "nested/a"])
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
amounts = st.floats(min_value=0, max_value=64, allow_nan=False, allow_infinity=False)

json_scalars: st.SearchStrategy[JsonValue] = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53), 2**53), finite, st.text(max_size=8)
)
json_values: st.SearchStrategy[JsonValue] = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
json_dicts: st.SearchStrategy[JsonDict] = st.dictionaries(
    st.text(max_size=8), json_values, max_size=4
)

bundles = st.builds(
    Resources,
    cpu=amounts,
    gpu=amounts,
    memory=amounts,
    object_store_memory=amounts,
    custom=st.dictionaries(names, amounts, max_size=2),
)
resources = bundles | st.builds(
    Resources,
    bundles=st.lists(bundles, min_size=1, max_size=3).map(tuple),
    strategy=st.sampled_from(STRATEGIES),
)
locations = st.builds(
    Location,
    hostname=st.none() | names,
    pid=st.none() | st.integers(1, 2**22),
)
policies = st.builds(
    CheckpointPolicy,
    frequency=st.integers(0, 3),
    at_end=st.booleans(),
    num_to_keep=st.none() | st.integers(1, 3),
    score_attribute=st.sampled_from(["score", "training_iteration"]),
    score_order=st.sampled_from(Mode),
)
checkpoint_refs = st.builds(
    CheckpointRef,
    storage=st.sampled_from(CheckpointStorage),
    path=names,
    training_iteration=st.integers(0, 1000),
    metrics=json_dicts,
)
specs = st.builds(
    TrialSpec,
    trial_id=st.just("t0"),
    trainable_name=names,
    config=json_dicts,
    evaluated_params=json_dicts,
    experiment_tag=st.text(max_size=10),
    resources=resources,
    stopping_criterion=st.dictionaries(metric_names, finite, max_size=2),
    checkpoint_policy=policies,
    max_failures=st.integers(-1, 3),
    restore_path=st.none() | names,
    custom_name=st.none() | names,
)
