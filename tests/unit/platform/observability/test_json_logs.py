"""The JSON line format: one object per line, the workflow id where known, whitelisted fields, masked secrets."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from temporalio.testing import ActivityEnvironment

from groundwork.platform.observability.logs import JsonFormatter, RequestContext, current_request


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("groundwork.test_json_logs")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield stream
    logger.removeHandler(handler)


def _entries(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_line_logged_inside_an_activity_names_its_workflow(lines: io.StringIO) -> None:
    def work() -> None:
        logging.getLogger("groundwork.test_json_logs").info("inside the activity")

    environment = ActivityEnvironment()
    environment.run(work)
    [entry] = _entries(lines)
    assert entry["message"] == "inside the activity"
    assert entry["workflow_id"] == environment.info.workflow_id


def test_a_line_from_the_workflow_logger_names_its_workflow(lines: io.StringIO) -> None:
    logger = logging.getLogger("groundwork.test_json_logs")
    logger.info("replayed", extra={"temporal_workflow": {"workflow_id": "wie_01ABC", "run_id": "r"}})
    logger.info("outside any workflow")
    first, second = _entries(lines)
    assert first["workflow_id"] == "wie_01ABC"
    assert "workflow_id" not in second


def test_a_line_logged_while_a_request_is_served_names_the_request_and_its_principal(lines: io.StringIO) -> None:
    class Caller:
        id = "prn_01CALLER"

    scope: dict[str, object] = {}
    token = current_request.set(RequestContext("req-1", scope))
    try:
        logging.getLogger("groundwork.test_json_logs").info("before auth")
        scope["user"] = Caller()
        logging.getLogger("groundwork.test_json_logs").info("after auth")
    finally:
        current_request.reset(token)
    before, after = _entries(lines)
    assert before["request_id"] == "req-1" and "principal_id" not in before
    assert after["request_id"] == "req-1" and after["principal_id"] == "prn_01CALLER"


def test_keys_secrets_and_bearer_credentials_are_masked_and_unknown_extras_dropped(lines: io.StringIO) -> None:
    key = "gw_" + "k" * 43
    secret = "whsec_" + "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"
    logger = logging.getLogger("groundwork.test_json_logs")
    logger.warning("refused %s and %s", key, secret, extra={"body": "a private message", "status": 401})
    try:
        raise ValueError(f"Authorization: Bearer {key}")
    except ValueError:
        logger.exception("failed")
    first, second = _entries(lines)
    text = json.dumps([first, second])
    assert key not in text and secret not in text and "k" * 43 not in text
    assert first["message"] == "refused [redacted] and [redacted]"
    assert "body" not in first and "a private message" not in text
    assert first["status"] == 401 and first["level"] == "warning"
    assert "ValueError" in str(second["exception"]) and "[redacted]" in str(second["exception"])
