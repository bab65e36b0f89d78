"""Helpers for evidence search tests: contribute sources through the provider API, search through REST."""

from __future__ import annotations

import base64
from typing import Any

import httpx

from tests.conftest import Workspace, idem


async def contribute(
    workspace: Workspace,
    project: str,
    uri: str,
    content: str | bytes,
    kind: str = "markdown",
    expect: int = 201,
    **extra: Any,
) -> dict[str, Any]:
    """POST a source to the internal provider API as the workspace's provider (waiting for ingestion); `data`."""
    body: dict[str, Any] = {"project_id": workspace.projects[project], "uri": uri, "kind": kind, **extra}
    if isinstance(content, bytes):
        body["content_base64"] = base64.b64encode(content).decode()
    else:
        body["content"] = content
    response = await workspace.internal.post(
        "/internal/v1/corpus/sources",
        params={"wait": 30},
        json=body,
        headers=workspace.headers(await workspace.provider_key(), **idem()),
    )
    assert response.status_code == expect, response.text
    return response.json()["data"]


async def search(
    client: httpx.AsyncClient,
    workspace: Workspace,
    key: str,
    query: str,
    *,
    subject: tuple[str, str] | None = None,
    project: str = "ALPHA",
    expect: int = 200,
    **extra: Any,
) -> dict[str, Any]:
    """POST /api/v1/context/search and return the JSON answer."""
    subject_type, subject_id = subject or ("project", workspace.projects[project])
    response = await client.post(
        "/api/v1/context/search",
        json={"subject_ref": {"type": subject_type, "id": subject_id}, "query": query, **extra},
        headers=workspace.headers(key),
    )
    assert response.status_code == expect, response.text
    return response.json()


def marked(passage: dict[str, Any]) -> list[str]:
    """The highlighted substrings of a passage's text."""
    return [passage["text"][h["start"] : h["end"]] for h in passage["highlights"]]
