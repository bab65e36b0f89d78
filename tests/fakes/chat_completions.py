"""A stand-in for an OpenAI-compatible chat-completions endpoint, on 127.0.0.1 (an outside system)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    """How the fake answers: a status, a JSON answer (as the model's content), and a delay per call."""

    status: int = 200
    answer: dict[str, Any] = field(default_factory=dict)
    delay_seconds: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    received: threading.Event = field(default_factory=threading.Event)
    # How many calls were in flight at once, at most (concurrent actions overlap here).
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def chat_completions_endpoint(script: Script) -> Iterator[str]:
    """Serve `script` until the block ends; yields the base URL (…/v1)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            script.requests.append({"path": self.path, "body": body, "auth": self.headers.get("authorization")})
            script.received.set()
            with script.lock:
                script.in_flight += 1
                script.most_in_flight = max(script.most_in_flight, script.in_flight)
            time.sleep(script.delay_seconds)
            with script.lock:
                script.in_flight -= 1
            payload = {"choices": [{"message": {"role": "assistant", "content": json.dumps(script.answer)}}]}
            data = json.dumps(payload if script.status == 200 else {"error": "scripted"}).encode()
            try:
                self.send_response(script.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the caller went away (a killed worker)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
