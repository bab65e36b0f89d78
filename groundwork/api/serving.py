"""`groundwork serve`: uvicorn with two listeners, the public API and the internal API, in every process."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile

import uvicorn
from uvicorn.supervisors import Multiprocess

from groundwork.api.app import SERVER_OPTIONS
from groundwork.config import prometheus_multiproc_dir
from groundwork.platform.observability.logs import logging_config


def _listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise SystemExit(f"error: cannot listen on {host}:{port} for the internal API: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def serve_listeners(
    *, host: str, port: int, internal_host: str, internal_port: int, workers: int, access_log: bool = False
) -> None:
    """Serve both apps until stopped; each connection reaches the app of the listener it arrived on."""
    config = uvicorn.Config(
        "groundwork.api.app:listeners_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        proxy_headers=True,
        log_level="info",
        # JSON lines; one per request from `groundwork.access` (with its request id) when access_log is on.
        log_config=logging_config(access_log=access_log),
        access_log=False,
        **SERVER_OPTIONS,
    )
    own_metrics_dir = None
    if workers > 1 and prometheus_multiproc_dir() is None:
        # Every process writes its metrics here and /metrics of any of them adds up all of them.
        own_metrics_dir = tempfile.mkdtemp(prefix="groundwork-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = own_metrics_dir
    sockets = [config.bind_socket(), _listening_socket(internal_host, internal_port)]
    print(f"internal API on http://{internal_host}:{internal_port} (/internal/v1, /schema)", file=sys.stderr)
    server = uvicorn.Server(config)
    try:
        if config.workers > 1:
            Multiprocess(config, sockets=sockets).run()
        else:
            server.run(sockets=sockets)
    except KeyboardInterrupt:
        pass
    finally:
        if own_metrics_dir is not None:
            shutil.rmtree(own_metrics_dir, ignore_errors=True)
    if config.workers == 1 and not server.started:
        raise SystemExit(3)
