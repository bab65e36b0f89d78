"""JSON log lines with the request id, principal and workflow; never a key, secret, action token or message body."""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from groundwork.platform.observability.logs import JsonFormatter, logging_config
from tests.conftest import Workspace, idem
from tests.integration.notifications.conftest import Mailbox, People, SendingStack, start_thread, wait_until
from tests.integration.webhooks.conftest import Receiver, create_endpoint


class CapturedLogs:
    """Every line the process logs while a test runs, formatted as the servers format them."""

    def __init__(self) -> None:
        self.stream = io.StringIO()

    @property
    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stream.getvalue().splitlines()]

    @property
    def text(self) -> str:
        return self.stream.getvalue()


@pytest.fixture
def captured_logs() -> Iterator[CapturedLogs]:
    """JSON lines at the levels `groundwork serve --access-log` and `groundwork worker` log at, and every
    line of Groundwork's own loggers down to DEBUG."""
    captured = CapturedLogs()
    handler = logging.StreamHandler(captured.stream)
    handler.setFormatter(JsonFormatter())
    levels: dict[str, str | int] = {"": "INFO", "groundwork": "DEBUG"}
    for name, config in logging_config("INFO", access_log=True)["loggers"].items():
        levels[name] = config["level"]
    loggers = {name: logging.getLogger(name or None) for name in levels}
    before = {name: logger.level for name, logger in loggers.items()}
    logging.getLogger().addHandler(handler)
    for name, level in levels.items():
        loggers[name].setLevel(level)
    try:
        yield captured
    finally:
        logging.getLogger().removeHandler(handler)
        for name, level in before.items():
            loggers[name].setLevel(level)


async def test_a_well_formed_request_id_is_echoed_and_any_other_is_replaced(client: httpx.AsyncClient) -> None:
    sent = (await client.get("/health/live", headers={"X-Request-Id": "checkout-7f3a.1:2"})).headers["x-request-id"]
    assert sent == "checkout-7f3a.1:2"
    for bad in ("has spaces", "x" * 129, "semi;colon"):
        answered = (await client.get("/health/live", headers={"X-Request-Id": bad})).headers["x-request-id"]
        assert answered != bad and len(answered) == 32 and int(answered, 16) >= 0
    generated = {(await client.get("/health/live")).headers["x-request-id"] for _ in range(3)}
    assert len(generated) == 3
    # Errors and unmatched paths carry one too.
    unmatched = await client.get("/no/such/thing", headers={"X-Request-Id": "lost-1"})
    assert unmatched.status_code == 404 and unmatched.headers["x-request-id"] == "lost-1"


async def test_access_lines_carry_the_request_id_and_principal(
    client: httpx.AsyncClient, workspace: Workspace, captured_logs: CapturedLogs
) -> None:
    key = await workspace.key(admin=True)
    response = await client.get("/api/v1/projects", headers=workspace.headers(key, **{"X-Request-Id": "req-projects"}))
    assert response.status_code == 200
    [line] = [line for line in captured_logs.lines if line.get("request_id") == "req-projects"]
    assert line["logger"] == "groundwork.access" and line["level"] == "info"
    assert line["principal_id"] == workspace.principals["admin"]
    assert line["method"] == "GET" and line["route"] == "/api/v1/projects" and line["status"] == 200
    assert line["duration_ms"] > 0 and line["time"].endswith("Z")


async def test_no_key_secret_action_token_or_message_body_is_ever_logged(
    client: httpx.AsyncClient,
    people: People,
    mailbox: Mailbox,
    sending: SendingStack,
    receivers: Callable[[], Awaitable[Receiver]],
    captured_logs: CapturedLogs,
) -> None:
    sent_before = REGISTRY.get_sample_value(
        "groundwork_notification_sends_total", {"channel": "email", "outcome": "sent"}
    )
    body = f"Body-{uuid.uuid4().hex} of a private message"
    title = f"Title-{uuid.uuid4().hex}"
    preferences = {"channels": {"email": {"enabled": True, "address": "bob@example.test"}}}
    response = await client.put(
        "/api/v1/notifications/preferences", json=preferences, headers=people.headers(people.bob)
    )
    assert response.status_code == 200, response.text
    receiver = await receivers()
    endpoint = await create_endpoint(client, people.workspace, people.bob.key, receiver.url, ["notification.*"])
    secret = endpoint["secret"]
    assert secret.startswith("whsec_")

    await start_thread(client, people, people.alice, [people.bob], body, title=title)
    [mail] = await mailbox.wait_for(1, timeout=30)
    assert body in mail.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    [link] = mailbox.action_links(mail)
    token = link.rstrip("/").rsplit("/", 1)[-1]
    assert (await client.get(link)).status_code == 200
    await receiver.wait_for(1, timeout=30)
    # Refused keys and values are logged about, never logged themselves.
    unknown_key = "gw_" + uuid.uuid4().hex + uuid.uuid4().hex
    assert (await client.get("/api/v1/projects", headers={"Authorization": f"Bearer {unknown_key}"})).status_code == 401
    refused = await client.post(
        "/api/v1/messages",
        json={"title": "nul\u0000" + body, "participant_ids": [people.bob.id], "body": "nul\u0000" + body},
        headers=people.headers(people.alice, **idem()),
    )
    assert refused.status_code in (400, 422), refused.text

    async def sent() -> bool:
        value = REGISTRY.get_sample_value(
            "groundwork_notification_sends_total", {"channel": "email", "outcome": "sent"}
        )
        return (value or 0) == (sent_before or 0) + 1

    await wait_until(sent, what="the e-mail send to be counted")

    logged = captured_logs.text
    assert captured_logs.lines, "nothing was logged: the capture is broken"
    for name, value in {
        "alice's key": people.alice.key,
        "bob's key": people.bob.key,
        "the refused key": unknown_key,
        "the signing secret": secret,
        "the signing secret's key": secret.removeprefix("whsec_"),
        "the action token": token,
        "the message body": body,
        "the message body's marker": body.split()[0],
        "the thread title": title,
    }.items():
        assert value not in logged, f"{name} was logged"
    # The capture saw these requests: their lines name the callers.
    principals = {line.get("principal_id") for line in captured_logs.lines}
    assert {people.alice.id, people.bob.id} <= principals


async def test_the_access_line_of_a_request_that_starts_a_workflow_names_it(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, captured_logs: CapturedLogs
) -> None:
    key = await workspace.key(admin=True)
    item = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "Export the ledger", "status": "todo"},
        headers=workspace.headers(key, **idem()),
    )
    assert item.status_code == 201, item.text
    response = await client.post(
        "/api/v1/work-item-enhancements?wait=0",
        json={"target": {"type": "work_item", "id": item.json()["data"]["id"]}, "actions": ["design"], "confirm": True},
        headers=workspace.headers(key, **idem(), **{"X-Request-Id": "req-run"}),
    )
    assert response.status_code in (200, 201, 202), response.text
    [line] = [line for line in captured_logs.lines if line.get("request_id") == "req-run"]
    assert line["workflow_id"] == response.json()["data"]["id"]
    assert line["principal_id"] == workspace.principals["admin"]
