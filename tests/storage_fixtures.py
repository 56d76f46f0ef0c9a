"""Storage for tests that need somewhere other than the driver's disk
(issue 11), loaded as a plugin by tests/conftest.py.

- `file_store`: a `file://` URI on a fresh directory of its own: the cheap
  case every test can use.
- `s3_store`: an S3-compatible server (moto's, on 127.0.0.1, started once
  per session) and a fresh bucket per test, reached through
  `pyarrow.fs.S3FileSystem(endpoint_override=...)`.

Both give a `StorageTarget`: the URI a user would pass as `storage_path`
(for S3 it carries the endpoint and the dummy credentials, so the URI alone
reaches the bucket, as on a second machine), the filesystem object a user
would pass as `storage_filesystem` (None for `file://`), and a `Store` on
the same root to look at what landed there.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tunecore.shell.storage.arrow_store import ArrowStore
from tunecore.shell.storage.local_store import LocalStore
from tunecore.shell.storage.store import Store

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem

S3_KEY = "testing"
S3_REGION = "us-east-1"


@dataclass(frozen=True)
class StorageTarget:
    uri: str
    filesystem: FileSystem | None
    store: Store

    def experiment_uri(self, name: str) -> str:
        """The URI of the experiment `name` under this storage, as a user
        passes it to `Tuner.restore` (the query that reaches the server
        stays at the end)."""
        base, mark, query = self.uri.partition("?")
        return f"{base}/{name}{mark}{query}"


@pytest.fixture
def staging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The driver's staging directories for mirrored storage, per test
    (`TUNECORE_STAGING`), instead of under `~/tunecore_results`."""
    directory = tmp_path / "staging"
    monkeypatch.setenv("TUNECORE_STAGING", str(directory))
    return directory


@pytest.fixture
def file_store(tmp_path: Path, staging: Path) -> StorageTarget:
    root = tmp_path / "storage"
    root.mkdir()
    return StorageTarget(uri=f"file://{root}", filesystem=None, store=LocalStore(str(root)))


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """`host:port` of a moto S3 server for the whole session."""
    # Imported here: moto takes over a second to import, and most sessions
    # never ask for S3. Missing, it is an error, not a skip (it is in `dev`).
    from moto.server import ThreadedMotoServer  # noqa: PLC0415

    # One line per request on stderr otherwise.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"{host}:{port}"
    server.stop()


def make_s3_target(endpoint: str) -> StorageTarget:
    """A fresh bucket on the S3 server at `endpoint` (`host:port`)."""
    from pyarrow.fs import S3FileSystem  # noqa: PLC0415

    fs = S3FileSystem(
        endpoint_override=endpoint,
        scheme="http",
        access_key=S3_KEY,
        secret_key=S3_KEY,
        region=S3_REGION,
        allow_bucket_creation=True,
    )
    bucket = f"test-{uuid.uuid4().hex[:16]}"
    fs.create_dir(bucket)
    uri = (
        f"s3://{S3_KEY}:{S3_KEY}@{bucket}"
        f"?endpoint_override={endpoint}&scheme=http&region={S3_REGION}"
    )
    return StorageTarget(uri=uri, filesystem=fs, store=ArrowStore(fs, bucket, f"s3://{bucket}"))


@pytest.fixture
def s3_store(s3_endpoint: str, staging: Path) -> StorageTarget:
    return make_s3_target(s3_endpoint)
