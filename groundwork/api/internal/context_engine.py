"""Internal API of the governed commit path: register providers, contribute, follow a contribution.

Served from the public app for now (like `/internal/v1/corpus`); every route declares `internal`, so
the auth middleware answers 404 to any key that is not a provider principal's.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter

from groundwork.api.resources.context_engine import (
    answer_resource,
    contribution_resource,
    internal_provider_resource,
)
from groundwork.api.rest.documents.common import typed
from groundwork.api.rest.documents.internal import (
    ContributionDocument,
    RegisteredProviderDocument,
    RegisteredProviderList,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.context_engine import contributions as service
from groundwork.services.context_engine import registrations

CONTRIBUTE = {"scope": "context-engine:contribute", "idempotent": True, "internal": True}
INSPECT = {"scope": "context-engine:contribute", "internal": True}


class ProviderBody(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    classification: str
    capabilities: list[str]
    authority: str = "advisory"


class ReferenceBody(msgspec.Struct, forbid_unknown_fields=True):
    kind: str
    id: str
    class_: str = msgspec.field(default="general", name="class")


class EvidenceBody(msgspec.Struct, forbid_unknown_fields=True):
    capability: str
    reference: ReferenceBody
    as_of: str


class ContributionBody(msgspec.Struct, forbid_unknown_fields=True):
    provider_id: str
    project_id: str
    term: str
    summary: str
    contribution_type: str
    evidence: list[EvidenceBody]
    generated_at: str
    promoter_identity: str | None = None
    supersedes: str | None = None


class ContextProviderController(Controller):
    path = "/internal/v1/context-engine/providers"
    tags = ["internal: context providers"]

    @post(
        "/",
        opt=CONTRIBUTE,
        summary="Register a provider (internal)",
        description=(
            "By name within the workspace: 201 when new, 200 when it existed (capabilities and authority are "
            "updated; the classification never changes)."
        ),
    )
    async def register(
        self, request: Request[Principal, Any, Any], data: ProviderBody
    ) -> Response[RegisteredProviderDocument]:
        row, created = await registrations.register_provider(
            request.user,
            registrations.ProviderRegistration(data.name, data.classification, list(data.capabilities), data.authority),
        )
        document = typed(RegisteredProviderDocument, {"data": internal_provider_resource(row)})
        if created:
            # Providers have no route of their own: `Location` is the list that shows it.
            return Response(document, status_code=201, headers={"Location": "/internal/v1/context-engine/providers"})
        return Response(document, status_code=200)

    @get("/", opt=INSPECT, summary="The workspace's registered providers (internal)")
    async def list_providers(self, request: Request[Principal, Any, Any]) -> RegisteredProviderList:
        rows = await registrations.workspace_providers(request.user)
        page = {"next_cursor": None, "has_more": False}
        return typed(RegisteredProviderList, {"data": [internal_provider_resource(r) for r in rows], "page": page})


class ContextContributionController(Controller):
    path = "/internal/v1/context-engine/contributions"
    tags = ["internal: context providers"]

    @post(
        "/",
        opt=CONTRIBUTE,
        summary="Contribute to the context engine (internal governed commit path)",
        description=(
            "Runs `ContextContributionWorkflow` (id `ctxc_<provider>_<fingerprint>`): persist, merge decision, "
            "supersede or create, index. Waits up to `wait` seconds: 201 when applied, 202 while under way, 200 "
            "when the same contribution was received before (nothing happens twice)."
        ),
    )
    async def contribute(
        self,
        request: Request[Principal, Any, Any],
        data: ContributionBody,
        wait: int = Parameter(default=10, ge=0, le=30),
    ) -> Response[ContributionDocument]:
        answer = await service.contribute(
            request.user,
            msgspec.to_builtins(data),
            temporal=request.app.state.temporal,
            task_queue=request.app.state.settings.temporal_task_queue,
            wait_seconds=wait,
        )
        document = typed(ContributionDocument, {"data": answer_resource(answer)})
        if answer.status_code in (201, 202):
            location = f"/internal/v1/context-engine/contributions/{document.data.id}"
            return Response(document, status_code=answer.status_code, headers={"Location": location})
        return Response(document, status_code=answer.status_code)

    @get("/{contribution_id:str}", opt=INSPECT, summary="One contribution: its state and decision (internal)")
    async def contribution(self, request: Request[Principal, Any, Any], contribution_id: str) -> ContributionDocument:
        row = await service.get_contribution(request.user, contribution_id)
        return typed(ContributionDocument, {"data": contribution_resource(row)})
