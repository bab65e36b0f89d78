"""REST: API keys: your own, or (workspace admins) any principal's; never with a connected app's key."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, Response, delete, get, post

from groundwork.api.documented import LIMIT, documented
from groundwork.api.resources.tenancy import api_key_resource
from groundwork.api.rest.documents.common import created, typed
from groundwork.api.rest.documents.tenancy import ApiKeyDocument, ApiKeyList
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.tenancy.scopes import ALL_SCOPES
from groundwork.services.tenancy import workspace_keys as service

# 403 `permission_denied` for a connected app's key.
ANY_KEY = {"scope": None, "problems": (403,)}
# The answer holds the secret: a replay of the same request is stored sealed under the key ring.
ISSUE_SECRET = {**ANY_KEY, "idempotent": True, "sealed_answer": True}


class NewKeyBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("principal_id", "scopes")
    principal_id: str | None = None
    scopes: Annotated[list[str], documented(items={"type": "string", "enum": list(ALL_SCOPES)}, minItems=1)] = []
    expires_at: Annotated[str, documented(format="date-time")] | None = None


class ApiKeyController(Controller):
    path = "/api/v1/api-keys"
    tags = ["api keys"]

    @post(
        "/",
        opt=ISSUE_SECRET,
        summary="Issue a key; the answer shows its secret (`data.secret`), once",
        description="For yourself with scopes your key holds, or as a workspace admin (`workspace:admin`) for any "
        "principal of the workspace. Never with a connected app's key.",
    )
    async def create_key(self, request: Request[Principal, Any, Any], data: NewKeyBody) -> Response[ApiKeyDocument]:
        made = await service.create_key(request.user, data.principal_id, list(data.scopes), data.expires_at)
        return created(typed(ApiKeyDocument, {"data": api_key_resource(made.record, made.secret)}), "/api/v1/api-keys")

    @get("/", opt=ANY_KEY, summary="Keys of the workspace (admins) or your own, newest first; never a secret")
    async def list_keys(
        self, request: Request[Principal, Any, Any], limit: int | None = LIMIT, cursor: str | None = None
    ) -> ApiKeyList:
        rows, page = await service.list_keys(request.user, limit=limit, cursor=cursor)
        return typed(ApiKeyList, {"data": [api_key_resource(r) for r in rows], "page": page})

    @delete("/{api_key_id:str}", opt=ANY_KEY, summary="Revoke a key at once, in every API process")
    async def revoke_key(self, request: Request[Principal, Any, Any], api_key_id: str) -> None:
        await service.revoke(request.user, api_key_id)
