"""REST: e-mail and chat action links. The token is the credential (no API key); GET only shows, POST acts.

A link in a message is opened with GET, which must never act (mail scanners prefetch links): it
answers a small page whose button POSTs to the same address. POST acknowledges as the recipient,
once. Browsers get HTML; API clients (`Accept: application/json`) get the usual JSON and problems.
"""

from __future__ import annotations

from html import escape
from typing import Any

from litestar import Request, Response, get, post
from litestar.enums import MediaType
from litestar.openapi import ResponseSpec

from groundwork.api.errors import groundwork_error_handler
from groundwork.api.rest.documents.common import typed
from groundwork.api.rest.documents.notifications import ActionLinkDocument, CommandDocument, with_camel_names
from groundwork.domain.errors import GroundworkError
from groundwork.services.notifications import actions as service

# The token is the credential; browsers get a page (`html_page`), a used or expired link is 410.
PUBLIC = {"auth": "public", "html_page": True, "problems": (410,)}


def _page(title: str, text: str, *, button: bool = False, status: int = 200) -> Response[str]:
    form = '<form method="post"><button type="submit">Acknowledge</button></form>' if button else ""
    html = (
        '<!doctype html><html><head><meta charset="utf-8"><title>Groundwork</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
        f'<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto"><h1>{escape(title)}</h1>'
        f"<p>{escape(text)}</p>{form}</body></html>"
    )
    return Response(html, status_code=status, media_type=MediaType.HTML)


def wants_html(request: Request[Any, Any, Any]) -> bool:
    """Whether the client is a browser asking for a page (not an API client asking for JSON)."""
    accept = request.headers.get("accept", "")
    return "text/html" in accept and "application/json" not in accept


def _keyring(request: Request[Any, Any, Any]) -> Any:
    return request.app.state.settings.keyring


@get(
    "/api/v1/notification-actions/{token:str}",
    opt=PUBLIC,
    tags=["notifications"],
    summary="Show an action link",
    description="Contract v0.2 (preview). What the link would acknowledge; changes nothing. A browser "
    "(`Accept: text/html`) gets a page with a button that uses the link.",
    responses={
        200: ResponseSpec(ActionLinkDocument, description="The notification the link acts on.", generate_examples=False)
    },
)
async def show_action(request: Request[Any, Any, Any], token: str) -> Response[Any]:
    """What the link would do, with a button that does it; changes nothing."""
    try:
        _, notification = await service.describe(_keyring(request), token)
    except GroundworkError as error:
        if wants_html(request):
            return _page("This link cannot be used", error.detail, status=error.status)
        return groundwork_error_handler(request, error)
    if wants_html(request):
        return _page(notification.title, f"Acknowledge this notification? ({notification.status})", button=True)
    link = {"id": notification.id, "status": notification.status, "version": notification.version}
    return Response(typed(ActionLinkDocument, {"data": {**link, "title": notification.title}}))


@post(
    "/api/v1/notification-actions/{token:str}",
    opt={**PUBLIC, "problems": (409, 410)},
    tags=["notifications"],
    summary="Use an action link: acknowledge as the recipient (signed, single-use, expiring)",
    description="Contract v0.2 (preview). A sink may acknowledge, never dismiss.",
    status_code=200,
    responses={200: ResponseSpec(CommandDocument, description="Acknowledged.", generate_examples=False)},
)
async def use_action(request: Request[Any, Any, Any], token: str) -> Response[Any]:
    """Acknowledge through the link, once."""
    try:
        result = await service.redeem(_keyring(request), token)
    except GroundworkError as error:
        if wants_html(request):
            return _page("Not acknowledged", error.detail, status=error.status)
        return groundwork_error_handler(request, error)
    if wants_html(request):
        return _page("Acknowledged", "The notification is acknowledged. You can close this page.")
    return Response(typed(CommandDocument, {"data": with_camel_names(result.answer())}))
