"""Swagger UI (/schema) and GraphiQL (/graphql) render in headless Chromium with no request leaving 127.0.0.1.

Chromium is the system's (`apt-get install chromium`, or `GROUNDWORK_CHROMIUM=/path/to/chrome`),
driven through Playwright; no browser is downloaded. Requests to any other host are recorded and
aborted, so the tests prove the pages work on a machine with no internet.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.conftest import Workspace

# Generous: two cores shared by several suites; each wait returns as soon as its condition holds.
DEADLINE_MS = 60_000


def chromium_binary() -> str | None:
    """A Chromium or Chrome executable on this machine, if any."""
    named = os.environ.get("GROUNDWORK_CHROMIUM")
    if named:
        return named
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Traffic:
    """Every request the page made, and those that went anywhere but 127.0.0.1."""

    requests: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    binary = chromium_binary()
    if binary is None:
        pytest.skip("no Chromium binary found (apt-get install chromium, or set GROUNDWORK_CHROMIUM)")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=binary,
            headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage"],
            timeout=DEADLINE_MS * 2,
        )
        try:
            yield launched
        finally:
            await launched.close()


async def open_page(browser: Any, url: str) -> tuple[Any, Traffic]:
    """A fresh context's page at `url`; requests off 127.0.0.1 are recorded and aborted."""
    traffic = Traffic()
    context = await browser.new_context()
    context.set_default_timeout(DEADLINE_MS)

    async def route(route: Any) -> None:
        target = route.request.url
        traffic.requests.append(target)
        parts = urlsplit(target)
        if parts.scheme in ("data", "blob") or parts.hostname == "127.0.0.1":
            await route.continue_()
        else:
            traffic.external.append(target)
            await route.abort()

    await context.route("**/*", route)
    page = await context.new_page()
    page.on("pageerror", lambda error: traffic.errors.append(str(error)))
    await page.goto(url, wait_until="load")
    return page, traffic


async def test_swagger_ui_renders_our_operations_offline(browser: Any, api_url: str) -> None:
    page, traffic = await open_page(browser, f"{api_url}/schema")
    await page.wait_for_selector(".swagger-ui .opblock")
    paths = await page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/api/v1/projects" in path for path in paths), paths[:10]
    assert any("/api/v1/work-item-enhancements" in path for path in paths)
    assert await page.locator(".swagger-ui .info .title").inner_text() != ""
    assert traffic.external == []
    assert traffic.errors == []
    assert any(url.endswith("/static/swagger-ui/swagger-ui-bundle.js") for url in traffic.requests)


async def test_internal_schema_page_renders_the_internal_operations_offline(
    browser: Any, internal_api_url: str
) -> None:
    page, traffic = await open_page(browser, f"{internal_api_url}/schema")
    await page.wait_for_selector(".swagger-ui .opblock")
    paths = await page.locator(".opblock-summary-path").all_inner_texts()
    assert any(path.startswith("/internal/v1/") for path in paths), paths
    assert not any(path.startswith("/api/v1/") for path in paths)
    assert traffic.external == [] and traffic.errors == []


async def test_graphiql_renders_and_runs_a_query_with_a_key_offline(
    browser: Any, api_url: str, workspace: Workspace
) -> None:
    key = await workspace.key("alice")
    page, traffic = await open_page(browser, f"{api_url}/graphql")
    await page.wait_for_selector(".graphiql-container .graphiql-query-editor .CodeMirror")
    # The schema came through introspection (no key needed): the documentation explorer lists our root types.
    await page.click("[aria-label='Show Documentation Explorer']")
    await page.wait_for_selector(".graphiql-doc-explorer >> text=Mutation")
    await page.click(".graphiql-doc-explorer a.graphiql-doc-explorer-type-name:text-is('Query')")
    await page.wait_for_selector(".graphiql-doc-explorer .graphiql-doc-explorer-field-name:text-is('workItems')")
    # The key goes where a user puts it: the headers editor.
    headers = json.dumps({"Authorization": f"Bearer {key}"})
    headers_editor = ".graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror"
    await page.evaluate(
        "([selector, value]) => document.querySelector(selector).CodeMirror.setValue(value)", [headers_editor, headers]
    )
    await page.click(".graphiql-execute-button")
    await page.wait_for_function(
        "() => { const r = document.querySelector('.graphiql-response .CodeMirror');"
        " return r && r.CodeMirror.getValue().includes('alice'); }"
    )
    answer = json.loads(
        await page.evaluate("() => document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue()")
    )
    assert answer["data"]["viewer"]["name"] == "alice"
    assert "work-items:read" in answer["data"]["viewer"]["scopes"]
    assert traffic.external == []
    assert traffic.errors == []


async def test_graphiql_without_a_key_shows_the_unauthenticated_error(browser: Any, api_url: str) -> None:
    page, traffic = await open_page(browser, f"{api_url}/graphql")
    await page.wait_for_selector(".graphiql-container .graphiql-query-editor .CodeMirror")
    await page.click(".graphiql-execute-button")
    await page.wait_for_function(
        "() => { const r = document.querySelector('.graphiql-response .CodeMirror');"
        " return r && r.CodeMirror.getValue().includes('unauthenticated'); }"
    )
    assert traffic.external == [] and traffic.errors == []
