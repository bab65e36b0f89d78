"""REST: the page behind an e-mail's "View" link: one notification, read-only, its actions as action links.

The token is the credential (no API key) and opens this one page only. The page loads nothing from
anywhere (inline style, no script), links nowhere, and its one form posts to the notification's
action link; it is never cached, never indexed, and sends no `Referer` that would carry the token on.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any
from urllib.parse import urlsplit

from litestar import Request, Response, get
from litestar.enums import MediaType

from groundwork.api.errors import groundwork_error_handler
from groundwork.api.rest.notifications.actions import wants_html
from groundwork.domain.errors import GroundworkError
from groundwork.domain.times import format_timestamp
from groundwork.services.notifications import view_links
from groundwork.services.notifications.view_links import NotificationView

PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex, nofollow",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
}
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:40em;margin:2em auto;padding:0 1em;line-height:1.5;"
    "color:#1b1b1b}.status{color:#555;font-size:.9em}dl{display:grid;grid-template-columns:max-content 1fr;"
    "gap:.2em 1em;color:#333}dt{font-weight:600}button{font-size:1em;padding:.4em 1.2em}"
    "footer{margin-top:2em;color:#666;font-size:.85em}"
)
_STATUS_WORDS = {"unread": "Unread", "read": "Read", "acknowledged": "Acknowledged", "dismissed": "Dismissed"}


def markdown_html(text: str) -> str:
    """A notification body's short Markdown as safe HTML: paragraphs, line breaks, **bold** and `code` only."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    html = []
    for paragraph in paragraphs:
        part = escape(paragraph)
        part = re.sub(r"`([^`\n]+)`", r"<code>\1</code>", part)
        part = re.sub(r"\*\*([^*\n]+)\*\*", r"<strong>\1</strong>", part)
        html.append("<p>" + part.replace("\n", "<br>") + "</p>")
    return "".join(html)


def _document(title: str, main: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)} · Groundwork</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">'
        f"<style>{_STYLE}</style></head><body><main>{main}</main></body></html>"
    )


def render_view(page: NotificationView) -> str:
    """The page of one notification as it is now."""
    n = page.notification
    status = _STATUS_WORDS.get(n.status, n.status)
    if n.snoozed_until is not None:
        status += f" · snoozed until {format_timestamp(n.snoozed_until)}"
    actions = ""
    if page.acknowledge_url is not None:
        target = escape(urlsplit(page.acknowledge_url).path, quote=True)
        actions = f'<form method="post" action="{target}"><button type="submit">Acknowledge</button></form>'
    main = (
        f'<p class="status" id="status">{escape(status)}</p>'
        f"<h1>{escape(n.title)}</h1>"
        f'<article id="body">{markdown_html(n.body)}</article>'
        "<dl>"
        f"<dt>About</dt><dd>{escape(n.resource_type.replace('_', ' '))} <code>{escape(n.resource_id)}</code></dd>"
        f"<dt>From</dt><dd>{escape(n.source_kind.replace('_', ' '))}</dd>"
        f"<dt>Received</dt><dd>{format_timestamp(n.created_at)}</dd>"
        "</dl>"
        f"{actions}"
        f"<footer>A read-only page of one notification, opened from a message sent to you. The link works until "
        f"{format_timestamp(page.expires_at)}; everything else is in Groundwork.</footer>"
    )
    return _document(n.title, main)


def _refusal(title: str, detail: str) -> str:
    return _document(title, f"<h1>{escape(title)}</h1><p>{escape(detail)}</p>")


@get(
    "/api/v1/notification-views/{token:str}",
    opt={"auth": "public", "html_page": True, "problems": (410,)},
    tags=["notifications"],
    summary="The page behind an e-mail's View link: one notification, read-only (signed, expiring link)",
    description="Contract v0.2 (preview). No API key: the signed token opens this page only, for 7 days; a forged "
    "link is 404, an expired one 410 `view_link_expired`. Changes nothing. The notification's actions are "
    "its action links (`POST /api/v1/notification-actions/{token}`).",
    media_type=MediaType.HTML,
)
async def view_notification(request: Request[Any, Any, Any], token: str) -> Response[Any]:
    """Show one notification to whoever holds its view link."""
    settings = request.app.state.settings
    try:
        page = await view_links.view(settings.keyring, settings.public_url, token)
    except GroundworkError as error:
        if not wants_html(request):
            response = groundwork_error_handler(request, error)
            response.headers.update(PAGE_HEADERS)
            return response
        html = _refusal("This link cannot be used", error.detail)
        return Response(html, status_code=error.status, media_type=MediaType.HTML, headers=PAGE_HEADERS)
    return Response(render_view(page), media_type=MediaType.HTML, headers=PAGE_HEADERS)
