"""The core's stand-in for a searcher object in the shell
(`ExternalSearcher`): when it asks, what it keeps to tell, which answers it
takes, and that it encodes like every other policy."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tunecore.core.experiment import new_experiment, step
from tunecore.core.experiment.snapshot import decode_state, encode_state
from tunecore.core.experiment.state import ExperimentConfig
from tunecore.core.schedulers.fifo import FIFOScheduler
from tunecore.core.search import ConcurrencyLimiter, Repeater
from tunecore.core.search.base import ask_wanted_by, declining_by
from tunecore.core.search.domains import uniform
from tunecore.core.search.external import ExternalSearcher, Tell, TellKind
from tunecore.core.search.variants import parse_space
from tunecore.model import (
    Asked,
    ClusterResourcesChanged,
    Rejection,
    Resources,
    SearcherFailed,
)

NAME = "tests:Searcher"


def external(**fields: object) -> ExternalSearcher:
    return ExternalSearcher(name=NAME, **fields)  # type: ignore[arg-type]


def answered(
    searcher: ExternalSearcher, trial_id: str, config: dict[str, object]
) -> ExternalSearcher:
    wanted = searcher.ask_wanted()
    assert wanted is not None
    answer = Asked(at=0.0, key=wanted.key, trial_id=trial_id, told=wanted.told, config=config)  # type: ignore[arg-type]
    taken = searcher.with_answer(answer)
    assert taken is not None
    return taken


def test_it_asks_for_one_trial_at_a_time_and_hands_the_answer_to_that_trial() -> None:
    searcher, suggestion = external().suggest("t0")
    assert suggestion is None
    assert searcher.ask_wanted() is not None
    again, nothing = searcher.suggest("t0")
    assert nothing is None
    assert again.ask_wanted() == searcher.ask_wanted()  # one ask, not two
    searcher = answered(searcher, "t0", {"x": 1.5})
    assert searcher.ask_wanted() is None
    searcher, suggestion = searcher.suggest("t0")
    assert suggestion is not None
    assert suggestion.config == {"x": 1.5}
    assert suggestion.evaluated_params == {"x": 1.5}
    assert suggestion.experiment_tag == "1_x=1.5"
    assert searcher.live == ("t0",)


def test_the_param_spaces_constants_are_under_the_answer() -> None:
    space = parse_space({"x": uniform(0.0, 1.0), "fixed": {"a": 1, "b": [1, 2]}})
    searcher, _ = external(space=space).suggest("t0")
    searcher = answered(searcher, "t0", {"x": 0.5, "fixed": {"b": 3}})
    _, suggestion = searcher.suggest("t0")
    assert suggestion is not None
    assert suggestion.config == {"x": 0.5, "fixed": {"a": 1, "b": 3}}
    assert suggestion.evaluated_params == {"x": 0.5, "fixed/b": 3}


def test_an_answer_for_another_key_or_trial_is_refused() -> None:
    searcher, _ = external().suggest("t0")
    wrong_key = Asked(at=0.0, key=5, trial_id="t0", config={"x": 1})
    wrong_trial = Asked(at=0.0, key=0, trial_id="t9", config={"x": 1})
    too_many = Asked(at=0.0, key=0, trial_id="t0", told=1, config={"x": 1})
    assert searcher.with_answer(wrong_key) is None
    assert searcher.with_answer(wrong_trial) is None
    assert searcher.with_answer(too_many) is None
    assert external().with_answer(Asked(at=0.0, key=0, trial_id="t0")) is None


def test_tells_wait_in_order_and_an_answer_drops_those_it_told() -> None:
    searcher = external(hears_results=True)
    searcher, _ = searcher.suggest("a")
    searcher = answered(searcher, "a", {"x": 1})
    searcher, _ = searcher.suggest("a")
    searcher = searcher.on_trial_result("a", {"m": 1})
    searcher = searcher.on_trial_complete("a", {"m": 2})
    assert searcher.untold == (
        Tell("a", TellKind.RESULT, {"m": 1}),
        Tell("a", TellKind.COMPLETE, {"m": 2}),
    )
    searcher, _ = searcher.suggest("b")
    wanted = searcher.ask_wanted()
    assert wanted is not None
    assert wanted.told == 2
    searcher = answered(searcher, "b", {"x": 2})
    assert searcher.untold == ()


def test_results_are_kept_only_for_a_searcher_that_hears_them() -> None:
    searcher, _ = external().suggest("a")
    searcher, _ = answered(searcher, "a", {"x": 1}).suggest("a")
    assert searcher.on_trial_result("a", {"m": 1}).untold == ()


def test_an_error_and_a_trial_from_outside_are_told_as_such() -> None:
    searcher, _ = external().suggest("a")
    searcher, _ = answered(searcher, "a", {"x": 1}).suggest("a")
    searcher = searcher.on_trial_complete("a", None, error=True)
    searcher = searcher.on_trial_complete("added", {"m": 3})
    assert [t.kind for t in searcher.untold] == [TellKind.ERROR, TellKind.ADDED]
    assert searcher.live == ()


def test_a_declining_searcher_is_asked_again_only_after_a_tell() -> None:
    searcher, _ = external().suggest("a")
    declined = searcher.with_answer(Asked(at=0.0, key=0, trial_id="a"))
    assert declined is not None
    again, suggestion = declined.suggest("a")
    assert suggestion is None
    assert again.ask_wanted() is None
    told = declined.on_trial_complete("elsewhere", {"m": 1})
    asking, _ = told.suggest("a")
    assert asking.ask_wanted() is not None


def test_declines_in_a_row_are_counted_until_a_tell_or_a_config() -> None:
    searcher = external(asks_again=True)
    for n, at in enumerate((5.0, 6.0, 8.0), start=1):
        asking, _ = searcher.suggest("a")
        taken = asking.with_answer(Asked(at=at, key=n - 1, trial_id="a"))
        assert taken is not None
        declined = taken.declining()
        assert declined is not None
        assert (declined.times, declined.since, declined.last) == (n, 5.0, at)
        assert declined.again_at == at + 1.0
        assert taken.suggest("a") == (taken, None)  # not asked before `ask_again`
        searcher = taken.ask_again()
        assert searcher.declining() is None
    assert searcher.declines == 3  # asked again: the count goes on
    assert searcher.on_trial_complete("elsewhere", {"m": 1}).declines == 0
    asking, _ = searcher.suggest("a")
    given = asking.with_answer(Asked(at=9.0, key=3, trial_id="a", config={"x": 1}))
    assert given is not None
    assert given.declines == 0


def test_a_searcher_from_an_older_log_is_not_asked_again() -> None:
    asking, _ = external().suggest("a")
    declined = asking.with_answer(Asked(at=5.0, key=0, trial_id="a"))
    assert declined is not None
    seen = declined.declining()
    assert seen is not None
    assert seen.again_at is None
    assert declined.ask_again() is declined
    assert declined.ask_again(anew=True) is declined


def test_finished_is_for_good() -> None:
    searcher, _ = external().suggest("a")
    finished = searcher.with_answer(Asked(at=0.0, key=0, trial_id="a", finished=True))
    assert finished is not None
    assert finished.is_finished
    assert finished.suggest("b") == (finished, None)


def test_wrappers_pass_asks_and_answers_through() -> None:
    for wrapper in (
        ConcurrencyLimiter(external(), max_concurrent=2),
        Repeater(external(), repeat=2, metric="m"),
    ):
        asking, _ = wrapper.suggest("a")
        wanted = ask_wanted_by(asking)
        assert wanted is not None
        answer = Asked(at=0.0, key=0, trial_id="a", config={"x": 1})
        taken = asking.with_answer(answer)
        assert taken is not None
        _, suggestion = taken.suggest("a")
        assert suggestion is not None
        assert suggestion.config["x"] == 1
        declined = asking.with_answer(Asked(at=3.0, key=0, trial_id="a"))
        assert declined is not None
        assert declining_by(declined) is not None
        assert declined.ask_again() is declined  # an older log's searcher
        assert declined.ask_again(anew=True) is declined


def _started(searcher: object) -> object:
    config = ExperimentConfig(trainable_name="t", trial_id_prefix="p", max_trials=3)
    state = new_experiment(config, FIFOScheduler(), searcher)  # type: ignore[arg-type]
    outcome = step(state, ClusterResourcesChanged(at=1.0, total=Resources(cpu=1)))
    assert not isinstance(outcome, Rejection)
    return outcome[0]


def test_the_experiment_waits_for_an_answer_instead_of_ending() -> None:
    state = _started(external())
    assert not state.done  # type: ignore[attr-defined]
    wanted = ask_wanted_by(state.searcher)  # type: ignore[attr-defined]
    assert wanted is not None
    assert wanted.trial_id == "p_00000"
    outcome = step(state, Asked(at=2.0, key=0, trial_id="p_00000", config={"x": 1}))  # type: ignore[arg-type]
    assert not isinstance(outcome, Rejection)
    assert outcome[0].trials["p_00000"].spec.config == {"x": 1}


def test_an_answer_nobody_asked_for_is_rejected_and_a_failure_ends_the_experiment() -> None:
    state = _started(external())
    stray = step(state, Asked(at=2.0, key=3, trial_id="p_00000", config={"x": 1}))  # type: ignore[arg-type]
    assert isinstance(stray, Rejection)
    outcome = step(state, SearcherFailed(at=2.0, error="ValueError: no"))  # type: ignore[arg-type]
    assert not isinstance(outcome, Rejection)
    assert outcome[0].done
    assert outcome[0].error == "The searcher failed: ValueError: no"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(
    untold=st.lists(
        st.builds(
            Tell,
            st.text(min_size=1),
            st.sampled_from(list(TellKind)),
            st.none() | st.dictionaries(st.text(), json_values, max_size=3),
        ),
        max_size=5,
    ),
    asks=st.integers(0, 100),
)
def test_it_encodes_and_decodes_inside_a_snapshot(untold: list[Tell], asks: int) -> None:
    searcher = external(untold=tuple(untold), asks=asks, seed=4, spec={"a": [1, 2]})
    state = _started(ConcurrencyLimiter(searcher, max_concurrent=2))
    data = encode_state(state)  # type: ignore[arg-type]
    assert encode_state(decode_state(data)) == data
    assert (
        msgspec.msgpack.decode(msgspec.msgpack.encode(searcher), type=ExternalSearcher) == searcher
    )


def test_a_name_is_required() -> None:
    with pytest.raises(ValueError, match=r"ExternalSearcher\.name"):
        ExternalSearcher(name="")


def test_pauses_are_told_only_to_a_searcher_that_hears_them() -> None:
    for hears, kinds in ((True, [TellKind.PAUSE, TellKind.UNPAUSE]), (False, [])):
        searcher, _ = external(hears_pauses=hears).suggest("a")
        searcher, _ = answered(searcher, "a", {"x": 1}).suggest("a")
        searcher = searcher.on_trial_pause("a").on_trial_unpause("a")
        searcher = searcher.on_trial_pause("not-mine")
        assert [t.kind for t in searcher.untold] == kinds
