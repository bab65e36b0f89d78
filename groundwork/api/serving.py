"""`groundwork serve`: uvicorn with two listeners, the public API and the internal API, in every process."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, cast

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from groundwork.api.app import SERVER_OPTIONS
from groundwork.config import prometheus_multiproc_dir
from groundwork.platform.observability.logs import logging_config


def _listening_socket(host: str, port: int, what: str, *, share_port: bool = False) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if share_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise SystemExit(f"error: cannot listen on {host}:{port} for {what}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def checked_port(host: str, port: int, what: str) -> int:
    """The port to listen on (a free one for 0), checked free: no other server takes a share of its connections."""
    with _listening_socket(host, port, what) as probe:
        return int(probe.getsockname()[1])


def _own_listener(host: str, port: int, what: str) -> socket.socket:
    try:
        return _listening_socket(host, port, what, share_port=True)
    except SystemExit as refused:
        print(refused, file=sys.stderr)
        sys.exit(STARTUP_FAILURE)  # uvicorn's supervisor then stops instead of restarting the worker


@dataclass(frozen=True)
class OwnListener:
    """A listener a worker process opens for itself on a port its siblings listen on too (SO_REUSEPORT).

    uvicorn's supervisor hands every worker the sockets it was given, and a worker process receives them
    pickled. This one is unpickled as a socket of the worker's own. With one socket shared by all workers, a
    burst of keep-alive connections often lands on a single worker (all 16 of a client's connections in about
    two of five bursts, measured): that worker serves alone while the others idle. With a socket per worker,
    the kernel spreads new connections over them, and a dead worker's socket goes with it."""

    host: str
    port: int
    what: str

    def __reduce__(self) -> tuple[Any, tuple[str, int, str]]:
        return _own_listener, (self.host, self.port, self.what)


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
    server = uvicorn.Server(config)
    try:
        if config.workers > 1:
            port = checked_port(host, port, "the API")
            internal_port = checked_port(internal_host, internal_port, "the internal API")
            # The line uvicorn logs when it binds the socket itself (the single-process case).
            logging.getLogger("uvicorn.error").info(
                "Uvicorn running on http://%s:%d (Press CTRL+C to quit)", host, port
            )
            print(f"internal API on http://{internal_host}:{internal_port} (/internal/v1, /schema)", file=sys.stderr)
            listeners = [
                OwnListener(host, port, "the API"),
                OwnListener(internal_host, internal_port, "the internal API"),
            ]
            Multiprocess(config, sockets=cast(list[socket.socket], listeners)).run()
        else:
            sockets = [config.bind_socket(), _listening_socket(internal_host, internal_port, "the internal API")]
            print(f"internal API on http://{internal_host}:{internal_port} (/internal/v1, /schema)", file=sys.stderr)
            server.run(sockets=sockets)
    except KeyboardInterrupt:
        pass
    finally:
        if own_metrics_dir is not None:
            shutil.rmtree(own_metrics_dir, ignore_errors=True)
    if config.workers == 1 and not server.started:
        raise SystemExit(3)
