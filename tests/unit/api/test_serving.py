"""`groundwork serve --workers N`: each worker process listens on a socket of its own on the shared port."""

from __future__ import annotations

import pickle
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from groundwork.api.serving import OwnListener, checked_port


@contextmanager
def _own_listeners(port: int, count: int) -> Iterator[list[socket.socket]]:
    with ExitStack() as stack:
        listeners = []
        for _ in range(count):
            # What a worker process receives: the listener pickled by uvicorn's supervisor.
            sock = stack.enter_context(pickle.loads(pickle.dumps(OwnListener("127.0.0.1", port, "the API"))))
            sock.listen(64)
            sock.setblocking(False)
            listeners.append(sock)
        yield listeners


def _accepted(sock: socket.socket) -> int:
    count = 0
    while True:
        try:
            conn, _ = sock.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def test_each_worker_gets_its_own_socket_and_new_connections_spread_over_them() -> None:
    port = checked_port("127.0.0.1", 0, "the API")
    with _own_listeners(port, 2) as listeners, ExitStack() as clients:
        assert len({sock.fileno() for sock in listeners}) == 2
        assert {sock.getsockname()[1] for sock in listeners} == {port}
        for _ in range(32):  # a client pool opening its connections at once
            clients.enter_context(socket.create_connection(("127.0.0.1", port)))
        counts = [_accepted(sock) for sock in listeners]
    # With one shared socket, the first worker to wake often took a whole burst; here each gets a share.
    assert sum(counts) == 32 and min(counts) > 0, counts


def test_a_port_another_server_listens_on_is_refused_by_name_before_any_worker_starts() -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        taken = other.getsockname()[1]
        with pytest.raises(SystemExit, match=rf"cannot listen on 127\.0\.0\.1:{taken} for the internal API"):
            checked_port("127.0.0.1", taken, "the internal API")


def test_port_zero_is_resolved_once_so_every_worker_listens_on_the_same_port() -> None:
    port = checked_port("127.0.0.1", 0, "the API")
    assert port > 0
    with _own_listeners(port, 3) as listeners:
        assert {sock.getsockname()[1] for sock in listeners} == {port}
