"""`tunecore dashboard`'s web server: the page, its script and style, and
the JSON they ask for, read-only, from one experiment.

Why the standard library's `ThreadingHTTPServer`: the dashboard serves a
handful of GET routes (and one POST, the what-if, which only computes) to
one user's browser on their own machine; a framework would add
dependencies and surface for nothing it needs. Each request is answered
from the follower's view under its lock, so threads never see half an
event.

Security, since everything shown comes from a log anyone who could write
the experiment could have crafted:
- It binds to 127.0.0.1 unless asked for another address.
- A request whose `Host` is not the address served is refused (a web page
  elsewhere cannot reach it through DNS rebinding).
- The page runs only its own script: `Content-Security-Policy` allows no
  inline script and no other origin, and the script sets texts, never
  HTML, so a `<script>` in a metric name is shown, not run.
- It serves only its three assets and its JSON: no path of the request
  maps to a file, so nothing outside the experiment (or in it, through a
  link) is ever read on a request's say-so.
"""

from __future__ import annotations

import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tunecore.api.dashboard import payloads
from tunecore.api.dashboard.follow import Follower
from tunecore.api.dashboard.gcpause import collector_paused
from tunecore.api.whatif import what_if, what_if_scheduler
from tunecore.core.results import TRAINING_ITERATION
from tunecore.model import InvalidFieldError

logger = logging.getLogger(__name__)

_ASSETS = resources.files(__package__ or "tunecore.api.dashboard")
PAGES = {
    "/": ("page.html", "text/html; charset=utf-8"),
    "/dashboard.js": ("dashboard.js", "text/javascript; charset=utf-8"),
    "/dashboard.css": ("dashboard.css", "text/css; charset=utf-8"),
}
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
MAX_BODY = 64 * 1024
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


class Dashboard:
    """A follower and the server that shows it; `serve_forever` or, in
    tests and notebooks, `start` and `close`."""

    def __init__(self, follower: Follower, host: str = "127.0.0.1", port: int = 8265) -> None:
        self.follower = follower
        self.server = ThreadingHTTPServer((host, port), _handler(self))
        self.server.daemon_threads = True
        self.host = host
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def allowed_hosts(self) -> set[str]:
        """The `Host` headers a request may carry."""
        names = {self.host, *LOCAL_HOSTS} if self.host in LOCAL_HOSTS else {self.host}
        if self.host in {"0.0.0.0", "::"}:
            return set()
        return {f"{name}:{self.port}" for name in names} | names

    def start(self) -> None:
        """Follow the log and serve, both in background threads (a long
        log is read while the page already shows what was read)."""
        self.follower.start()
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="tunecore-dashboard", daemon=True
        )
        self._thread.start()

    def serve_forever(self) -> None:
        self.follower.start()
        try:
            self.server.serve_forever()
        finally:
            self.close()

    def close(self) -> None:
        self.server.shutdown() if self._thread is not None else None
        self.server.server_close()
        self.follower.stop()

    def answer(self, path: str, query: dict[str, list[str]]) -> Any:
        """The JSON for a GET of `path`, or None for no such route."""
        follower = self.follower
        with follower.view() as view:
            if path == "/api/version":
                read, size = follower.progress()
                done = view.state.done
                return {
                    "version": view.version,
                    "events": view.events,
                    "done": done,
                    "read": read,
                    "size": size,
                }
            if path == "/api/overview":
                return payloads.overview(view, follower.location, follower.problem)
            if path == "/api/trials":
                return payloads.trials(view)
            if path == "/api/curves":
                chosen = [t for t in _one(query, "trials").split(",") if t]
                x = _one(query, "x") or TRAINING_ITERATION
                if x not in payloads.X_AXES:
                    raise InvalidFieldError("x", x, f"one of {', '.join(payloads.X_AXES)}")
                return payloads.curves(view, chosen, _one(query, "y") or None, x)
            if path == "/api/trial":
                return payloads.trial(view, _one(query, "id"))
            if path == "/api/decisions":
                return payloads.decisions(view)
        return None

    def what_if(self, body: dict[str, Any]) -> dict[str, Any]:
        """The recorded run replayed under the scheduler `body` names."""
        name = body.get("scheduler")
        options = body.get("options", {})
        if not isinstance(name, str) or not isinstance(options, dict):
            raise InvalidFieldError("scheduler", name, "a scheduler name and its options")
        result = what_if(self.follower.directory, what_if_scheduler(name, options))
        return {
            "metric": result.metric,
            "mode": result.mode.value,
            "table": [
                ["trials", result.original.trials, result.what_if.trials],
                ["stopped early", result.original.stopped_early, result.what_if.stopped_early],
                ["iterations", result.original.iterations, result.what_if.iterations],
                [
                    "compute s",
                    round(result.original.compute_s, 1),
                    round(result.what_if.compute_s, 1),
                ],
                [f"best {result.metric}", result.original.best, result.what_if.best],
                ["best trial", result.original.best_trial, result.what_if.best_trial],
            ],
            "trial_ids": list(result.trial_ids),
            "ran": [list(result.original.ran), list(result.what_if.ran)],
        }


def _one(query: dict[str, list[str]], name: str) -> str:
    values = query.get(name)
    return values[0] if values else ""


def _encoded(data: Any) -> bytes:
    return json.dumps(data, allow_nan=False, separators=(",", ":")).encode()


def _handler(dashboard: Dashboard) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "tunecore-dashboard"

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug("%s " + format, self.address_string(), *args)

        def do_GET(self) -> None:
            if not self._host_allowed():
                return
            url = urlsplit(self.path)
            if url.path in PAGES:
                name, kind = PAGES[url.path]
                self._send(HTTPStatus.OK, _ASSETS.joinpath(name).read_bytes(), kind)
                return
            with collector_paused():
                try:
                    answer = dashboard.answer(url.path, parse_qs(url.query))
                except InvalidFieldError as error:
                    self._json(HTTPStatus.BAD_REQUEST, {"error": str(error)})
                    return
                if answer is None:
                    self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {url.path}"})
                    return
                body = _encoded(answer)
            self._send(HTTPStatus.OK, body, "application/json")

        def do_POST(self) -> None:
            if not self._host_allowed():
                return
            if urlsplit(self.path).path != "/api/whatif":
                self._json(HTTPStatus.NOT_FOUND, {"error": "no such page"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if not 0 < length <= MAX_BODY:
                self._json(HTTPStatus.BAD_REQUEST, {"error": "a JSON body of at most 64 KiB"})
                return
            try:
                body = json.loads(self.rfile.read(length))
                if not isinstance(body, dict):
                    raise InvalidFieldError("body", body, "a JSON object")
                answer = dashboard.what_if(body)
            except (ValueError, TypeError) as error:
                self._json(HTTPStatus.BAD_REQUEST, {"error": str(error)})
                return
            self._json(HTTPStatus.OK, answer)

        def _host_allowed(self) -> bool:
            allowed = dashboard.allowed_hosts()
            if not allowed or self.headers.get("Host", "") in allowed:
                return True
            self._json(HTTPStatus.FORBIDDEN, {"error": "this address does not serve that host"})
            return False

        def _json(self, status: HTTPStatus, data: Any) -> None:
            self._send(status, _encoded(data), "application/json")

        def _send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", POLICY)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    return Handler
