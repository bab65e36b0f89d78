"""The page behind an e-mail's "View" link, in headless Chromium: it renders the one notification with no API key
and loads nothing else, acknowledges through its action link, expires, and its link opens nothing else.

The e-mail is sent for real (a worker and relay of their own, a real SMTP server on 127.0.0.1) and the
link is taken from it as a recipient would click it. Chromium is the system's, as in test_browser_pages.py.
"""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from groundwork.config import Settings
from groundwork.services.notifications.view_links import view_url
from tests.conftest import idem
from tests.e2e.test_browser_pages import browser, open_page
from tests.integration.notifications.conftest import (
    Mailbox,
    People,
    SendingStack,
    mailbox,
    people,
    sending,
    start_thread,
    wait_until,
)

__all__ = ["browser", "mailbox", "people", "sending"]


async def _mailed_view_link(
    client: httpx.AsyncClient, people: People, mailbox: Mailbox
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Bob gets a notification he is not mailed about, turns e-mail on, and is mailed about a second one."""
    await start_thread(client, people, people.alice, [people.bob], "The codeword is tangerine.", title="Private matter")

    async def first_arrived() -> bool:
        listed = await client.get("/api/v1/notifications", headers=people.headers(people.bob))
        return len(listed.json()["data"]) == 1

    await wait_until(first_arrived, what="the first notification")
    prefs = {"channels": {"email": {"enabled": True, "address": "bob@example.com", "digest": "immediate"}}}
    saved = await client.put("/api/v1/notifications/preferences", json=prefs, headers=people.headers(people.bob))
    assert saved.status_code == 200, saved.text
    await start_thread(
        client, people, people.alice, [people.bob], "Please review the **release plan** by `Friday`.", title="Release"
    )
    [message] = await mailbox.wait_for(1, timeout=30)
    text = message.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    found = re.search(r"View: (\S+)", text)
    assert found is not None, text
    listed = (await client.get("/api/v1/notifications", headers=people.headers(people.bob))).json()["data"]
    mailed, private = listed[0], listed[1]
    assert message["X-Groundwork-Notification"] == mailed["id"]
    return found.group(1), mailed, private


async def test_the_view_link_renders_the_one_notification_acknowledges_and_loads_nothing_else(
    browser: Any, client: httpx.AsyncClient, people: People, mailbox: Mailbox, sending: SendingStack, api_url: str
) -> None:
    link, mailed, private = await _mailed_view_link(client, people, mailbox)
    assert link.startswith(f"{api_url}/api/v1/notification-views/")
    page, traffic = await open_page(browser, link)
    assert await page.locator("h1").inner_text() == mailed["title"]
    assert await page.locator("#status").inner_text() == "Unread"
    body = page.locator("#body")
    assert "Please review the release plan by Friday." in await body.inner_text()
    assert await body.locator("strong").inner_text() == "release plan"
    assert await body.locator("code").inner_text() == "Friday"
    # One page, no key, nothing loaded besides it, nowhere to go but its one action.
    assert traffic.requests == [link] and traffic.external == [] and traffic.errors == []
    assert await page.locator("a").count() == 0
    actions = await page.eval_on_selector_all("form", "forms => forms.map(f => f.getAttribute('action'))")
    assert len(actions) == 1 and actions[0].startswith("/api/v1/notification-actions/")
    html = await page.content()
    for secret in (private["id"], private["title"], "tangerine", people.bob.key, people.bob.id, people.alice.id):
        assert secret not in html
    response = await page.reload()
    assert response is not None
    headers = await response.all_headers()
    assert headers["cache-control"] == "no-store" and headers["referrer-policy"] == "no-referrer"
    assert "default-src 'none'" in headers["content-security-policy"]

    await page.click("button:text-is('Acknowledge')")
    await page.wait_for_selector("h1:text-is('Acknowledged')")
    detail = (await client.get(f"/api/v1/notifications/{mailed['id']}", headers=people.headers(people.bob))).json()
    assert (detail["data"]["status"], detail["data"]["version"]) == ("acknowledged", 3)
    assert [(h["command"], h["via"]) for h in detail["data"]["history"]] == [
        ("read", "email"),
        ("acknowledge", "email"),
    ]
    # The page shows the notification as it is now; a sink has nothing more to offer (it never dismisses).
    await page.goto(link)
    assert await page.locator("#status").inner_text() == "Acknowledged"
    assert await page.locator("form").count() == 0


async def test_an_expired_view_link_shows_nothing_and_a_view_link_opens_nothing_else(
    browser: Any, client: httpx.AsyncClient, people: People, mailbox: Mailbox, sending: SendingStack, api_url: str,
    settings: Settings,
) -> None:  # fmt: skip
    link, mailed, private = await _mailed_view_link(client, people, mailbox)
    assert settings.keyring is not None
    expired = view_url(
        settings.keyring,
        api_url,
        notification_id=mailed["id"],
        recipient_id=people.bob.id,
        now=datetime.now(UTC) - timedelta(days=8),
    )
    page, traffic = await open_page(browser, expired)
    assert await page.locator("h1").inner_text() == "This link cannot be used"
    assert "expired" in await page.locator("p").inner_text()
    html = await page.content()
    assert mailed["title"] not in html and mailed["id"] not in html and traffic.external == []
    refused = await client.get(expired, headers={"Accept": "application/json"})
    assert refused.status_code == 410 and refused.json()["code"] == "view_link_expired"

    token = link.rsplit("/", 1)[1]
    # Not an API key, not an action link, not a page of another notification.
    assert (await client.get("/api/v1/notifications", headers={"Authorization": f"Bearer {token}"})).status_code == 401
    assert (await client.get(f"/api/v1/notifications/{mailed['id']}")).status_code == 401
    as_action = f"/api/v1/notification-actions/{token}"
    assert (await client.get(as_action, headers={"Accept": "application/json"})).status_code == 404
    assert (await client.post(as_action, headers={"Accept": "application/json", **idem()})).status_code == 404
    body, signature = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["n"] = private["id"]
    forged_body = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")
    forged = await client.get(f"/api/v1/notification-views/{forged_body}.{signature}")
    assert forged.status_code == 404 and private["title"] not in forged.text
    page, _ = await open_page(browser, f"{api_url}/api/v1/notification-views/{forged_body}.{signature}")
    assert "tangerine" not in await page.content()
    # Opening the page changed nothing.
    detail = (await client.get(f"/api/v1/notifications/{mailed['id']}", headers=people.headers(people.bob))).json()
    assert (detail["data"]["status"], detail["data"]["version"], detail["data"]["history"]) == ("unread", 1, [])
