"""Webhook rules without servers: signing against the reference library, URLs, subscriptions, schedule."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook

from groundwork.domain import webhooks as rules


def _headers(secrets: list[str], body: bytes, msg_id: str = "evt_1") -> dict[str, str]:
    now = int(datetime.now(UTC).timestamp())
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(now),
        "webhook-signature": rules.signature_header(secrets, msg_id, now, body),
    }


def test_signatures_verify_with_the_standardwebhooks_package() -> None:
    secret = rules.new_secret()
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 24
    body = rules.envelope_body({"event_id": "evt_1", "payload": {"text": "naïve ✓"}})
    assert json.loads(body.decode())["payload"]["text"] == "naïve ✓"
    Webhook(secret).verify(body, _headers([secret], body))
    expected = Webhook(secret).sign("evt_1", datetime.fromtimestamp(1_700_000_000, UTC), body.decode())
    assert rules.signature(secret, "evt_1", 1_700_000_000, body) == expected


def test_two_secrets_give_two_signatures_either_verifies() -> None:
    new, old, stranger = rules.new_secret(), rules.new_secret(), rules.new_secret()
    body = b'{"a":1}'
    headers = _headers([new, old], body)
    assert headers["webhook-signature"].count("v1,") == 2
    Webhook(new).verify(body, headers)
    Webhook(old).verify(body, headers)
    with pytest.raises(Exception, match="signature"):
        Webhook(stranger).verify(body, headers)


def test_envelope_has_the_v1_fields_in_order() -> None:
    event = rules.envelope(
        event_id="evt_1",
        type="notification.created",
        event_version=1,
        occurred_at=datetime(2026, 11, 22, 1, 27, 24, 123456, tzinfo=UTC),
        workspace_id="ws_1",
        resource_type="notification",
        resource_id="notification_1",
        actor_id=None,
        payload={"notification_id": "notification_1"},
        source=None,
    )
    assert list(event) == [
        "event_id",
        "type",
        "event_version",
        "occurred_at",
        "workspace_id",
        "resource",
        "actor",
        "payload",
        "source",
    ]
    assert event["occurred_at"] == "2026-11-22T01:27:24.123456Z" and event["actor"] == {"id": None}
    assert rules.envelope_body(event) == rules.envelope_body(dict(event))


def test_the_catalogue_lists_every_spec_event() -> None:
    services = {name.split(".")[0] for name in rules.EVENT_TYPES}
    assert services == {"work_item_enhancement", "context_engine", "notification", "webhook"}
    # The enhancement spec's six and `draft_rejected` (issue 38); context engine, notifications, webhooks.
    assert len(rules.EVENT_TYPES) == 7 + 3 + 3 + 1


@pytest.mark.parametrize(
    ("subscription", "event_type", "expected"),
    [
        (["notification.created"], "notification.created", True),
        (["notification.created"], "notification.updated", False),
        (["notification.*"], "notification.updated", True),
        (["work_item_enhancement.*"], "notification.updated", False),
        (["context_engine.*", "notification.created"], "context_engine.merge_decided", True),
    ],
)
def test_subscriptions(subscription: list[str], event_type: str, expected: bool) -> None:
    assert rules.subscribes(subscription, event_type) is expected


def test_subscription_errors() -> None:
    assert rules.subscription_errors(["notification.*", "work_item_enhancement.queued"]) == []
    assert [e.path for e in rules.subscription_errors(["x", "notification.*", "y.*"])] == [
        "event_types[0]",
        "event_types[2]",
    ]
    assert rules.subscription_errors([])[0].path == "event_types"
    assert rules.subscription_errors(["notification.*"] * 51)[0].message.startswith("at most")


@pytest.mark.parametrize(
    ("url", "private_ok", "public_ok"),
    [
        ("https://hooks.example.com/x?y=1", True, True),
        ("http://93.184.215.14:8080/x", True, True),
        ("http://127.0.0.1:9000/x", True, False),
        ("http://10.0.0.1/x", True, False),
        ("http://172.16.5.4/x", True, False),
        ("http://100.64.1.1/x", True, False),
        ("http://169.254.169.254/x", True, False),
        ("http://[fe80::1]/x", True, False),
        ("http://[fd00::1]/x", True, False),
        ("http://[::ffff:10.0.0.1]/x", True, False),
        ("http://localhost:8000/x", True, False),
        ("http://printer.local/x", True, False),
        ("ftp://example.com/x", False, False),
        ("https:///x", False, False),
        ("https://example.com:99999/x", False, False),
        ("https://a:b@example.com/x", False, False),
        ("https://example.com/x#frag", False, False),
        ("https://exa mple.com/x", False, False),
    ],
)
def test_url_rules(url: str, private_ok: bool, public_ok: bool) -> None:
    assert (rules.url_errors(url, allow_private=True) == []) is private_ok
    assert (rules.url_errors(url, allow_private=False) == []) is public_ok


def test_schedule_parsing_and_jitter() -> None:
    assert rules.parse_schedule(None) == rules.STANDARD_SCHEDULE
    assert len(rules.STANDARD_SCHEDULE) == 10 and rules.STANDARD_SCHEDULE[-1] == 86400
    assert rules.parse_schedule("0, 0.5,2") == (0.0, 0.5, 2.0)
    for bad in ("", "1,x", "-1", "nan", ",".join(["1"] * 21)):
        if bad:
            with pytest.raises(ValueError):
                rules.parse_schedule(bad)
    assert rules.jittered(100, 0.1, 0.0) == 100 and rules.jittered(100, 0.1, 0.999) < 110
    assert rules.jittered(0, 0.1, 0.5) == 0


def test_retry_after() -> None:
    now = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
    assert rules.retry_after_seconds("120", now) == 120
    assert rules.retry_after_seconds("Sun, 22 Nov 2026 12:01:00 GMT", now) == 60
    assert rules.retry_after_seconds("Sun, 22 Nov 2026 11:00:00 GMT", now) == 0
    assert rules.retry_after_seconds("9999999", now) == rules.MAX_RETRY_AFTER_SECONDS
    assert rules.retry_after_seconds("soon", now) is None and rules.retry_after_seconds(None, now) is None
    assert rules.honours_retry_after(429) and rules.honours_retry_after(503)
    assert not rules.honours_retry_after(500)


def test_delivery_status_and_endpoint_disabling() -> None:
    assert rules.delivery_status_after(current="pending", succeeded=True, gone=False, final=False) == (
        "succeeded",
        None,
    )
    assert rules.delivery_status_after(current="pending", succeeded=False, gone=True, final=False) == (
        "failed",
        "endpoint_gone",
    )
    assert rules.delivery_status_after(current="pending", succeeded=False, gone=False, final=True) == (
        "failed",
        "exhausted",
    )
    assert rules.delivery_status_after(current="pending", succeeded=False, gone=False, final=False) == (
        "pending",
        None,
    )
    assert rules.delivery_status_after(current="succeeded", succeeded=False, gone=False, final=True) == (
        "succeeded",
        None,
    )
    now = datetime(2026, 11, 22, tzinfo=UTC)
    five_days = 5 * 24 * 3600.0

    def reason(**kw: object) -> str | None:
        args: dict = {"enabled": True, "gone": False, "failing_since": now, "attempted_at": now}
        return rules.disable_reason_after_failure(**{**args, **kw}, disable_after_seconds=five_days)

    assert reason() is None
    assert reason(gone=True) == "gone"
    assert reason(failing_since=now - timedelta(days=5)) == "failing"
    assert reason(failing_since=now - timedelta(days=4, hours=23)) is None
    assert reason(enabled=False, gone=True) is None
    assert rules.is_success(204) and not rules.is_success(302) and not rules.is_success(None)


def test_hosts_that_are_not_dns_names_are_refused_not_a_500() -> None:
    from groundwork.domain.webhooks import url_errors

    for url in ("http://a..b.com/", "http://" + "a" * 64 + ".com/"):
        [error] = url_errors(url, allow_private=True)
        assert error.path == "url" and "DNS name" in error.message


def test_retry_after_accepts_only_ascii_digits_or_an_http_date() -> None:
    from datetime import UTC, datetime

    from groundwork.domain.webhooks import retry_after_seconds

    now = datetime(2026, 11, 22, tzinfo=UTC)
    assert retry_after_seconds("120", now) == 120.0
    assert retry_after_seconds("²", now) is None
    assert retry_after_seconds("Sun, 22 Nov 2026 00:01:00 GMT", now) == 60.0
    assert retry_after_seconds("Sun, 99 Foo 99999 99:99:99 GMT", now) is None
