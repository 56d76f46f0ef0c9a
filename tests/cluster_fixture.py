"""A two-node Ray cluster on this machine, where node 2 does not share the
experiment's storage path with the driver (issue 11).

Node 1 (the head) is `ray start --head`; node 2 is a second `ray start`
run under `unshare -m --propagation private` with a private tmpfs mounted
over `storage_path`, and its own HOME, TMPDIR and working directory. A
file written there by the driver is invisible to node 2, and the other way
round, so any code that assumes a shared filesystem fails on this cluster.
Node 2 carries the custom resource `node2` (a trial asking for a little of
it runs there); the head carries `node1`.

Each node runs in its own session (`start_new_session`): `remove_node2()`
and teardown kill the processes of those sessions and of node 2's mount
namespace, never `ray stop` (it would kill every Ray on the machine). Each
node has its own `--temp-dir`, so a `ray.init()` elsewhere on the machine
never attaches to this cluster; `RAY_AUTH_MODE=disabled` because Ray's auth
token lives under HOME, which node 2 does not share.

The pytest process never connects to this cluster (the rest of the suite
keeps its one local `ray.init`): tests run their driver in a subprocess
(`run_driver`), connected through `RAY_ADDRESS`. Node 2's mount vanishes
with the last process of its namespace.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# Every process of the test cluster (and its drivers). A fast health check
# on the head: a killed node is declared dead in ~5 s instead of ~15 s.
CLUSTER_ENV = {
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "500",
    "RAY_health_check_failure_threshold": "3",
}
_NODE_OPTIONS = (
    "--num-cpus=1",
    "--object-store-memory=100000000",
    "--dashboard-agent-listen-port=0",
    "--disable-usage-stats",
)
START_TIMEOUT_S = 60.0
REPOSITORY = Path(__file__).resolve().parents[1]


def _ray_binary() -> str:
    """The `ray` script of the interpreter running the tests (same Ray,
    same tunecore for the workers)."""
    return str(Path(sys.executable).parent / "ray")


def _session_pids(sid: int) -> set[int]:
    """The processes of session `sid`; none for 0 (no session of ours:
    kernel threads and the machine's own daemons have session 0)."""
    if sid <= 1:
        return set()
    return {pid for pid, stat in _proc_stats() if int(stat[3]) == sid}


def _namespace_pids(namespace: str) -> set[int]:
    return {pid for pid, _ in _proc_stats() if _mount_namespace(pid) == namespace}


def _proc_stats() -> Iterator[tuple[int, list[str]]]:
    """(pid, the fields of /proc/pid/stat after the command name)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # exited meanwhile
        yield int(entry), raw[raw.rindex(")") + 2 :].split()


def _mount_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


def _kill_all(pids: set[int]) -> None:
    for pid in pids - {0, 1, os.getpid()}:
        with contextlib.suppress(ProcessLookupError):  # exited meanwhile
            os.kill(pid, signal.SIGKILL)


@dataclass
class TwoNodeCluster:
    """The cluster (see the module docstring). `storage_path` is the path
    node 2 sees as its own empty tmpfs; `shared_dir` is a directory both
    nodes and the driver share (for the tests' own coordination files)."""

    root: Path
    storage_path: Path
    shared_dir: Path
    head_address: str = ""
    _head_sid: int = 0
    _node2_sid: int = 0
    _node2_namespace: str | None = None

    @property
    def node2_home(self) -> str:
        return str(self.root / "node2" / "home")

    def env(self) -> dict[str, str]:
        """The environment of a driver process of this cluster. Its staging
        directory (storage in a URI) is on the path node 2 does not see."""
        return {
            **os.environ,
            **CLUSTER_ENV,
            "RAY_ADDRESS": self.head_address,
            "TUNECORE_STAGING": str(self.storage_path / ".staging"),
        }

    def start_head(self) -> None:
        temp_dir = self.root / "head"
        temp_dir.mkdir(parents=True, exist_ok=True)
        command = [
            _ray_binary(),
            "start",
            "--head",
            "--port=0",
            f"--temp-dir={temp_dir}",
            "--resources=" + json.dumps({"node1": 1}),
            "--include-dashboard=false",
            *_NODE_OPTIONS,
        ]
        self._head_sid, out = self._start(command, cwd=self.root)
        found = re.search(r"--address='([^']+)'", out)
        if found is None:
            raise RuntimeError(f"ray start --head printed no address:\n{out}")
        self.head_address = found.group(1)

    def start_node2(self) -> None:
        """Start (or restart) node 2 in a fresh private mount namespace."""
        base = self.root / "node2"
        for name in ("home", "tmp", "cwd", "ray"):
            (base / name).mkdir(parents=True, exist_ok=True)
        ray_start = [
            _ray_binary(),
            "start",
            f"--address={self.head_address}",
            "--resources=" + json.dumps({"node2": 1}),
            f"--temp-dir={base / 'ray'}",
            *_NODE_OPTIONS,
        ]
        script = (
            f"mount -t tmpfs tmpfs {shlex.quote(str(self.storage_path))}"
            f" && cd {shlex.quote(str(base / 'cwd'))}"
            f" && exec env HOME={shlex.quote(str(base / 'home'))}"
            f" TMPDIR={shlex.quote(str(base / 'tmp'))} {shlex.join(ray_start)}"
        )
        command = ["unshare", "-m", "--propagation", "private", "sh", "-c", script]
        self._node2_sid, _ = self._start(command, cwd=base / "cwd")
        namespace = next(
            (ns for pid in _session_pids(self._node2_sid) if (ns := _mount_namespace(pid))),
            None,
        )
        if namespace is None or namespace == _mount_namespace(os.getpid()):
            self.remove_node2()
            raise RuntimeError("node 2 is not running in a mount namespace of its own")
        self._node2_namespace = namespace

    def remove_node2(self) -> None:
        """Kill node 2 (raylet, workers, everything in its session and its
        mount namespace), as a lost machine; Ray notices within ~5 s."""
        pids = _session_pids(self._node2_sid)
        if self._node2_namespace is not None:
            pids |= _namespace_pids(self._node2_namespace)
        _kill_all(pids)
        self._node2_sid = 0
        self._node2_namespace = None

    def node2_running(self) -> bool:
        return self._node2_sid != 0

    def stop(self) -> None:
        self.remove_node2()
        _kill_all(_session_pids(self._head_sid))
        self._head_sid = 0

    def _start(self, command: list[str], cwd: Path) -> tuple[int, str]:
        """Run a `ray start` in a new session; return that session's id
        (the process's pid) and what it printed. Its daemons stay in the
        session after it exits."""
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env={**os.environ, **CLUSTER_ENV},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            out, _ = process.communicate(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            _kill_all(_session_pids(process.pid))
            raise
        if process.returncode != 0:
            _kill_all(_session_pids(process.pid))
            raise RuntimeError(f"{shlex.join(command)} failed ({process.returncode}):\n{out}")
        return process.pid, out

    def start_driver(self, script: Path, *args: str) -> subprocess.Popen[str]:
        """Start `python script args` as a driver of this cluster: its own
        process, so the test session's Ray is untouched; the repository is
        on its path, so the script can import `tests`."""
        return subprocess.Popen(
            [sys.executable, str(script), *args],
            env={**self.env(), "PYTHONPATH": str(REPOSITORY)},
            cwd=self.shared_dir,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def _why_not_supported() -> str | None:
    if os.geteuid() != 0:
        return "needs root (a tmpfs mounted in a private mount namespace)"
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    if not Path(_ray_binary()).exists():
        return f"needs the ray script next to {sys.executable}"
    return None


@pytest.fixture(scope="module")
def two_node_cluster() -> Iterator[TwoNodeCluster]:
    """A head node and a node 2 that does not share `storage_path`. Its
    files live in a short path of their own: Ray's socket paths under
    `--temp-dir` must stay below 108 bytes, which pytest's tmp_path breaks."""
    reason = _why_not_supported()
    if reason is not None:
        pytest.skip(f"two_node_cluster {reason}")
    root = Path(tempfile.mkdtemp(prefix="tc2n-", dir="/tmp"))
    cluster = TwoNodeCluster(root=root, storage_path=root / "exp", shared_dir=root / "shared")
    cluster.storage_path.mkdir()
    cluster.shared_dir.mkdir()
    try:
        cluster.start_head()
        cluster.start_node2()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
