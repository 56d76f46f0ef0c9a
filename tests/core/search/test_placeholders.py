"""Placeholders: a string stands for an object only where it names its own place."""

from __future__ import annotations

from tunecore.core.search.domains import Choice, GridSearch
from tunecore.core.search.placeholders import (
    place_of,
    placeholder,
    places_in_config,
    places_in_space,
)
from tunecore.core.search.variants import parse_space
from tunecore.model import JsonDict


def test_a_placeholder_names_its_kind_path_and_index() -> None:
    assert placeholder("ObjectRef", (("model_ref",), 1)) == "<ObjectRef model_ref[1]>"
    assert placeholder("LargeModel", (("train", "model"), None)) == "<LargeModel train/model>"
    assert placeholder("Linear", (("layers", 0), None)) == "<Linear layers/0>"


def test_a_placeholder_is_read_back_only_at_its_own_path() -> None:
    assert place_of("<ObjectRef model_ref[1]>", ("model_ref",)) == (("model_ref",), 1)
    assert place_of("<LargeModel model>", ("model",)) == (("model",), None)
    assert place_of("<AnyOtherType model>", ("model",)) == (("model",), None)  # kind: display only
    assert place_of("<ObjectRef model_ref[1]>", ("other",)) is None
    assert place_of("<ObjectRef model_ref[1]>", ("model",)) is None  # a prefix is not the path
    assert place_of("<ObjectRef model_ref[x]>", ("model_ref",)) is None
    assert place_of("<model_ref>", ("model_ref",)) is None  # no kind
    assert place_of("model_ref", ("model_ref",)) is None
    assert place_of(3, ("model_ref",)) is None


def test_places_are_found_in_a_config_and_in_a_logged_space() -> None:
    config: JsonDict = {
        "a": {"b": "<Model a/b>"},
        "c": ["<Model c/0>", "plain"],
        "d": "<ObjectRef d[2]>",
    }
    assert set(places_in_config(config)) == {
        (("a", "b"), None),
        (("c", 0), None),
        (("d",), 2),
    }
    space = parse_space(
        {
            "m": "<Model m>",
            "g": GridSearch(["<ObjectRef g[0]>", "<ObjectRef g[1]>", 3]),
            "c": Choice(["<Model c[0]>", "<Model c[5]>"]),  # index 5 is not its place
        }
    )
    assert set(places_in_space(space)) == {
        (("m",), None),
        (("g",), 0),
        (("g",), 1),
        (("c",), 0),
    }
