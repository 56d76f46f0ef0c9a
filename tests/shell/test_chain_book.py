"""`ChainBook`: the executor's record of which trial is chained behind
which, whose two maps every operation keeps in step."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tunecore.core.schedulers.base import Horizon
from tunecore.shell.executors.base import ChainedStart
from tunecore.shell.executors.chain_book import ChainBook
from tunecore.shell.executors.host import Batch
from tunecore.shell.trainable.worker import TrialContext

HOLDERS = ["a", "b", "c"]
CHAINED = [f"t{i}" for i in range(8)]


def start(trial_id: str, until: Horizon | None = None) -> ChainedStart:
    context = TrialContext(
        trial_id=trial_id,
        trial_name=trial_id,
        trial_dir=f"/x/{trial_id}",
        experiment_dir="/x",
        until=until,
    )
    return ChainedStart(trial_id=trial_id, config={"id": trial_id}, context=context)


def test_a_chain_is_sent_nested_each_with_its_own_batch() -> None:
    book = ChainBook()
    book.keep("a", [start("t1", ("training_iteration", 3.0)), start("t2")])

    def batch_for(until: Horizon | None) -> Batch:
        return (1, None, until)

    sent = book.as_sent("a", batch_for)
    assert sent is not None
    config, context, batch, rest = sent
    assert (config, context.trial_id, batch) == (
        {"id": "t1"},
        "t1",
        (1, None, ("training_iteration", 3.0)),
    )
    assert rest is not None
    assert (rest[0], rest[2], rest[3]) == ({"id": "t2"}, (1, None, None), None)
    assert book.as_sent("b", batch_for) is None


def test_cut_drops_the_trial_taken_and_those_after_it() -> None:
    book = ChainBook()
    book.keep("a", [start("t1"), start("t2"), start("t3")])
    book.cut("a", "t2")
    assert book.chained_behind("a") == ["t1"]
    assert [book.holder(t) for t in ("t1", "t2", "t3")] == ["a", None, None]
    book.cut("a", "t1")
    assert book.chained_behind("a") == []
    assert book.holder("t1") is None


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(
            st.just("keep"),
            st.sampled_from(HOLDERS),
            st.lists(st.sampled_from(CHAINED), unique=True, max_size=4),
        ),
        st.tuples(st.just("cut"), st.sampled_from(HOLDERS), st.integers(0, 3)),
        st.tuples(st.just("take"), st.sampled_from(HOLDERS), st.none()),
    ),
    max_size=25,
)


@given(OPERATIONS)
def test_every_chained_trials_holder_is_the_chain_it_is_in(
    operations: list[tuple[str, str, Any]],
) -> None:
    book = ChainBook()
    for name, holder, argument in operations:
        if name == "keep":
            # The core chains only trials in no chain, behind a trial it starts.
            free = [t for t in argument if book.holder(t) is None and t not in HOLDERS]
            if book.chained_behind(holder) or book.holder(holder) is not None:
                continue
            book.keep(holder, [start(t) for t in free])
        elif name == "cut":
            chain = book.chained_behind(holder)
            if argument < len(chain):
                book.cut(holder, chain[argument])
                assert book.chained_behind(holder) == chain[:argument]
        else:
            chain = book.chained_behind(holder)
            assert [s.trial_id for s in book.take(holder)] == chain
        for trial_id in CHAINED:
            owner = book.holder(trial_id)
            in_chains = [h for h in HOLDERS if trial_id in book.chained_behind(h)]
            assert in_chains == ([] if owner is None else [owner])
            if owner is not None:
                assert book.holds_any(owner, [trial_id])
