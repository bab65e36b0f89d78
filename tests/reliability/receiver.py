"""A webhook receiver on 127.0.0.1 in a thread: records every POST, can be taken down and brought back on
the same port, and deduplicates by `webhook-id` as docs/webhooks.md tells receivers to."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.conftest import free_port


class ThreadedReceiver:
    """Every delivery it got (`requests`), and one event per `webhook-id` (`events`)."""

    def __init__(self, *, delay_seconds: float = 0.0) -> None:
        self.port = free_port()
        self.delay_seconds = delay_seconds
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def up(self) -> ThreadedReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if receiver.delay_seconds:
                    time.sleep(receiver.delay_seconds)  # answers slowly: deliveries are in flight for a while
                with receiver._lock:
                    receiver.requests.append((self.headers.get("webhook-id", ""), json.loads(body)))
                with contextlib.suppress(ConnectionError):  # the sender may have died meanwhile
                    self.send_response(200)
                    self.send_header("content-length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def down(self) -> None:
        """Stop listening: connections are refused until `up()` again."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def events(self) -> dict[str, dict[str, Any]]:
        """One envelope per `webhook-id`: what a deduplicating receiver processes."""
        with self._lock:
            return {webhook_id: envelope for webhook_id, envelope in self.requests}

    def duplicates(self) -> int:
        """Deliveries of a `webhook-id` already received (at-least-once retries)."""
        with self._lock:
            counts = Counter(webhook_id for webhook_id, _ in self.requests)
        return sum(n - 1 for n in counts.values())
