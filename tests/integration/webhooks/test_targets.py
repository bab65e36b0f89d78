"""SSRF: the address checked is the address connected to; non-public targets are refused at creation
and at every attempt (these tests run with private targets NOT allowed, DNS driven through the seam)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import ssl
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from groundwork.config import Settings
from groundwork.platform import http_targets as webhook_targets
from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.worker import outbox_relay
from tests.conftest import Workspace, serving
from tests.integration.webhooks.conftest import FakeDns, Receiver, create_endpoint, delivery_of, emit, wait_until

HOST = "hooks.example.test"  # `.test` never resolves through the system resolver: only the seam answers
PUBLIC = "93.184.215.14"


@pytest.fixture
async def strict_api(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The API as production runs it: private targets refused."""
    async with (
        serving(dataclasses.replace(settings, webhook_allow_private=False)) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield http


@pytest.fixture
async def strict_relay(worker: Any, temporal_client: Any, webhook_settings: Settings) -> AsyncIterator[OutboxRelay]:
    """A relay whose deliveries refuse private targets, as in production."""
    running = outbox_relay(temporal_client, dataclasses.replace(webhook_settings, webhook_allow_private=False))
    stop = asyncio.Event()
    task = asyncio.create_task(running.run(stop))
    yield running
    stop.set()
    await task


async def test_a_name_resolving_to_a_private_address_is_refused_at_creation(
    strict_api: httpx.AsyncClient, workspace: Workspace, dns: FakeDns
) -> None:
    key = await workspace.key(admin=True)
    for address in ("127.0.0.1", "10.0.0.7", "100.64.1.1", "::ffff:127.0.0.1", "2002:7f00:1::1", "64:ff9b::a00:1"):
        dns.answers[HOST] = [PUBLIC, address]  # one private answer among public ones is enough to refuse
        response = await strict_api.post(
            "/api/v1/webhook-endpoints",
            json={"url": f"https://{HOST}/hook", "event_types": ["notification.*"]},
            headers=workspace.headers(key, **{"Idempotency-Key": f"k-{address}"}),
        )
        assert response.status_code == 422, (address, response.text)
        assert response.json()["errors"][0]["path"] == "url"
    dns.answers[HOST] = [PUBLIC]
    await create_endpoint(strict_api, workspace, key, f"https://{HOST}/hook", ["notification.*"])
    listed = (await strict_api.get("/api/v1/webhook-endpoints", headers=workspace.headers(key))).json()["data"]
    assert len(listed) == 1


async def test_a_name_that_rebinds_to_loopback_is_refused_at_attempt_time_and_nothing_is_sent(
    strict_api: httpx.AsyncClient,
    workspace: Workspace,
    dns: FakeDns,
    strict_relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    dns.answers[HOST] = [PUBLIC]  # public when the endpoint is created...
    endpoint = await create_endpoint(
        strict_api, workspace, key, f"http://{HOST}:{receiver.port}/hook", ["notification.*"]
    )
    dns.answers[HOST] = ["127.0.0.1"]  # ...loopback (where the receiver listens) when it is attempted
    await emit(workspace, "notification.created")

    async def attempted() -> bool:
        deliveries = await delivery_of(strict_api, workspace, key, endpoint["id"])
        return bool(deliveries and deliveries[0]["attempts"])

    await wait_until(attempted, what="the first attempt")
    [delivery] = await delivery_of(strict_api, workspace, key, endpoint["id"])
    first = delivery["attempts"][0]
    assert first["outcome"] == "failed" and first["statusCode"] is None
    assert first["error"].startswith("refused:") and HOST in first["error"]
    await asyncio.sleep(0.5)
    assert receiver.requests == []


async def test_an_attempt_connects_to_the_checked_address_and_keeps_the_host_name(
    client: httpx.AsyncClient,
    workspace: Workspace,
    dns: FakeDns,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    # A name of its own: earlier tests' deliveries to HOST may still be retrying, and resolve it too.
    host = f"hooks-{uuid.uuid4().hex[:8]}.example.test"
    dns.answers[host] = ["127.0.0.1"]
    await create_endpoint(client, workspace, key, f"http://{host}:{receiver.port}/hook", ["notification.*"])
    dns.lookups.clear()
    await emit(workspace, "notification.created")
    [request] = await receiver.wait_for(1)
    # The system resolver cannot resolve `.test`: the request arrived because the connection went to the
    # address the check resolved, once, while the request still names the host.
    assert request.headers["host"] == f"{host}:{receiver.port}"
    assert [name for name in dns.lookups if name == host] == [host]


def _self_signed(tmp: Path, name: str) -> ssl.SSLContext:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    (tmp / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    return context


async def test_tls_to_the_pinned_address_still_names_the_host_and_checks_its_certificate(
    dns: FakeDns, tmp_path: Path
) -> None:
    context = _self_signed(tmp_path, HOST)
    named: list[str | None] = []
    context.sni_callback = lambda _socket, server_name, _context: named.append(server_name)  # type: ignore[assignment]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    dns.answers[HOST] = ["127.0.0.1"]
    try:
        target = await webhook_targets.check_target(f"https://{HOST}:{port}/hook", allow_private=True)
        assert isinstance(target, webhook_targets.CheckedTarget) and target.address == "127.0.0.1"
        async with webhook_targets.pinned(target):
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await webhook_targets.http_client().post(target.url, content=b"{}")
    finally:
        server.close()
        await server.wait_closed()
    assert named == [HOST]  # SNI carried the name although the socket went to 127.0.0.1


async def test_no_connection_is_made_to_a_target_that_was_not_checked(receivers: Any) -> None:
    receiver: Receiver = await receivers()
    with pytest.raises(httpx.ConnectError, match="was not checked"):
        await webhook_targets.http_client().post(receiver.url, content=b"{}")
    assert receiver.requests == []


async def test_redirects_are_not_followed(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    first, elsewhere = await receivers(), await receivers()
    first.default_status = 307
    first.answer(307, headers={"location": elsewhere.url})
    endpoint = await create_endpoint(client, workspace, key, first.url, ["notification.*"])
    await emit(workspace, "notification.created")
    await first.wait_for(1)

    async def attempted() -> bool:
        deliveries = await delivery_of(client, workspace, key, endpoint["id"])
        return bool(deliveries and deliveries[0]["attempts"])

    await wait_until(attempted, what="the first attempt")
    [delivery] = await delivery_of(client, workspace, key, endpoint["id"])
    assert delivery["attempts"][0]["statusCode"] == 307 and delivery["attempts"][0]["outcome"] == "failed"
    assert elsewhere.requests == []
