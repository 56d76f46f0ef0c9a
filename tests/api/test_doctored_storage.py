"""Attacks on an experiment's storage (storage54): stored experiments
someone changed (names and objects tunecore never wrote), experiments
placed inside others, a storage that goes away. Most run on `file://` and
on a local S3 server."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

import tunecore
from tests.api.test_mirrored_fit import counting, run_failing, trial_dirs
from tests.storage_fixtures import StorageTarget, make_s3_target
from tunecore import ResultGrid, RunConfig, SyncConfig, Tuner
from tunecore.model import JsonValue
from tunecore.shell.mirror.claims import TakenOverError, check_not_taken_over
from tunecore.shell.mirror.nesting import NestedExperimentError
from tunecore.shell.storage.resolve import within

TARGETS = ["file_store", "s3_store"]


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> StorageTarget:
    given: StorageTarget = request.getfixturevalue(request.param)
    return given


def forge_lapsed_lease(target: StorageTarget, generation: int) -> None:
    lease = {
        "host": "elsewhere",
        "pid": 7,
        "token": "forged",
        "renewed": time.time() - 3600,
        "generation": generation,
    }
    target.store.write_bytes("exp/driver.lease", json.dumps(lease).encode())


def scores(target: StorageTarget) -> list[object]:
    [result] = list(ResultGrid.from_path(target.experiment_uri("exp")))
    return [result.metrics.get("score"), result.error is None]


def test_a_lease_generation_past_eight_digits_loses_nothing_it_recorded(
    target: StorageTarget, staging: Path
) -> None:
    """A doctored lease naming generation 99,999,999 took the next driver
    to generation 100,000,000, whose names have nine digits. Every reader
    expected eight: the resume's log objects were left out, so the trial it
    finished read as the errored one again, and the next take-over went
    back to generation 2 (below it), which a worker of 100,000,000 never
    saw as a later claim."""
    run_failing(target)  # the trial ended in ERROR at step 2
    forge_lapsed_lease(target, 99_999_999)
    shutil.rmtree(staging)
    Tuner.restore(target.experiment_uri("exp"), counting, resume_errored=True).fit()
    assert scores(target) == [3, True]
    shutil.rmtree(staging)
    Tuner.restore(target.experiment_uri("exp"), counting).fit()  # the next take-over
    assert scores(target) == [3, True]
    events = within(target.store, "exp")
    assert any(name.startswith("claim_g100000001_") for name in events.list("events"))
    with pytest.raises(TakenOverError, match="generation 100000001"):
        check_not_taken_over(events, 100_000_000, "save")


def test_a_claim_in_other_digits_is_no_claim(target: StorageTarget) -> None:
    """`\\d` took Arabic-Indic digits, which `int` reads: a claim named in
    them fenced the log as a real one of that generation would."""
    run_failing(target)
    events = within(target.store, "exp")
    forged = "claim_g" + "\N{ARABIC-INDIC DIGIT NINE}" * 8
    events.write_bytes(f"events/{forged}", b"")
    check_not_taken_over(events, 1, "save")
    assert trial_dirs(target, "exp")


def stored_names(target: StorageTarget) -> list[str]:
    found: list[str] = []

    def walk(rel: str) -> None:
        for name in target.store.list(rel):
            path = f"{rel}/{name}" if rel else name
            found.append(path)
            walk(path)

    walk("")
    return sorted(found)


@pytest.mark.parametrize("inside", ["inbox", "events", "snapshots"])
def test_an_experiment_inside_another_is_refused_before_it_writes(
    target: StorageTarget, inside: str
) -> None:
    """A run whose place was inside a stored experiment (`storage_path`
    pointing into it, or a name below it) put its lease, claims and
    upload directory among the first one's entries: the first one's resume
    then failed on them (`inbox/.tunecore_upload_g00000001`: EISDIR out of
    fit()) or retried shipping its snapshots for good, and its inbox
    and retention deleted the second one's files."""
    run_failing(target)
    before = stored_names(target)
    base, mark, query = target.uri.partition("?")
    with pytest.raises(NestedExperimentError, match=r"inside the experiment .*exp"):
        Tuner(
            counting,
            param_space={"steps": 2},
            run_config=RunConfig(
                name=inside, storage_path=f"{base}/exp{mark}{query}", executor="in_process"
            ),
        ).fit()
    assert stored_names(target) == before
    restored = Tuner.restore(target.experiment_uri("exp"), counting, resume_errored=True).fit()
    assert [result.metrics["score"] for result in restored] == [3]


def test_a_local_experiment_inside_another_is_refused(tmp_path: Path) -> None:
    def fit(storage_path: Path, name: str) -> None:
        Tuner(
            counting,
            param_space={"steps": 2},
            run_config=RunConfig(
                name=name, storage_path=str(storage_path), verbose=0, executor="in_process"
            ),
        ).fit()

    fit(tmp_path, "outer")
    [trial] = [entry.name for entry in (tmp_path / "outer").glob("counting_*")]
    with pytest.raises(NestedExperimentError, match="inside the experiment"):
        fit(tmp_path / "outer", trial)
    fit(tmp_path, "beside")  # a sibling is no nesting


@pytest.mark.slow  # the client's retries of a refused connection: 30-110 s here
def test_a_storage_gone_as_the_run_ends_costs_it_no_results(staging: Path) -> None:
    """The S3 server stopped during the last step: shipping gave up after
    `sync_timeout` with a warning naming the staging copy, then the lease's
    release raised `OSError` out of `fit()`, and the run's results were
    lost to the caller (an error raised in the run was hidden the same way)."""
    from moto.server import ThreadedMotoServer  # noqa: PLC0415

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    target = make_s3_target(f"{host}:{port}")

    def stops_the_storage(config: Mapping[str, JsonValue]) -> None:
        tunecore.report({"score": 1})
        server.stop()
        tunecore.report({"score": 2})

    grid = Tuner(
        stops_the_storage,
        run_config=RunConfig(
            name="exp",
            storage_path=target.uri,
            sync_config=SyncConfig(sync_timeout=1),
            verbose=0,
            executor="in_process",
        ),
    ).fit()
    assert [result.metrics["score"] for result in grid] == [2]
