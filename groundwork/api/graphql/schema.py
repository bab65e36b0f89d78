"""The Strawberry schema served at /graphql; each service adds its fields here."""

from __future__ import annotations

from typing import Any

import strawberry
from cross_web import HTTPException
from litestar import Request, Response
from litestar.enums import MediaType
from strawberry.litestar import make_graphql_controller

from groundwork.api.graphql import context_engine as ce
from groundwork.api.graphql import enhancement as en
from groundwork.api.graphql import enhancement_review as er
from groundwork.api.graphql import evidence_search as cs
from groundwork.api.graphql import notifications as nt
from groundwork.api.graphql import people
from groundwork.api.graphql import work_items as wi
from groundwork.api.graphql.context import context_getter
from groundwork.api.graphql.errors import CodedErrors
from groundwork.api.graphql.graphiql import graphiql_page
from groundwork.api.graphql.http_input import check_http_input, refusal
from groundwork.api.graphql.limits import query_limits
from groundwork.api.input_policy.middleware import OWN_INPUT
from groundwork.domain.errors import GroundworkError


@strawberry.type
class Query:
    viewer: wi.Viewer = strawberry.field(resolver=wi.viewer)
    projects: list[wi.Project] = strawberry.field(resolver=wi.projects)
    principals: people.PersonConnection = strawberry.field(resolver=people.principals)
    work_item: wi.WorkItem | None = strawberry.field(resolver=wi.work_item)
    work_items: wi.WorkItemConnection = strawberry.field(resolver=wi.work_items)
    context_corpus_search: cs.CorpusPassageConnection = strawberry.field(resolver=cs.context_corpus_search)
    context_passage: cs.ContextPassage | None = strawberry.field(resolver=cs.context_passage)
    context_sources: cs.ContextSourceConnection = strawberry.field(resolver=cs.context_sources)
    context_query: ce.ContextBriefing = strawberry.field(resolver=ce.context_query)
    context_engine_search: ce.ContextEngineSearchResult = strawberry.field(resolver=ce.context_engine_search)
    context_engine_package_evidence: list[ce.ContextEvidenceReference] = strawberry.field(
        resolver=ce.context_engine_package_evidence
    )
    context_engine_providers: list[ce.ContextProvider] = strawberry.field(resolver=ce.context_engine_providers)
    context_engine_overview: ce.ContextEngineOverview = strawberry.field(resolver=ce.context_engine_overview)
    context_engine_packages: ce.ContextPackageConnection = strawberry.field(resolver=ce.context_engine_packages)
    context_engine_package: ce.ContextPackage | None = strawberry.field(resolver=ce.context_engine_package)
    work_item_enhancement_run: en.WorkItemEnhancementRun | None = strawberry.field(
        resolver=en.work_item_enhancement_run
    )
    work_item_enhancement_drafts: list[en.WorkItemEnhancementDraft] = strawberry.field(
        resolver=en.work_item_enhancement_drafts
    )
    work_item_enhancement_artifacts: list[en.WorkItemEnhancementArtifact] = strawberry.field(
        resolver=en.work_item_enhancement_artifacts
    )
    work_item_enhancement_runs: en.WorkItemEnhancementRunConnection = strawberry.field(
        resolver=en.work_item_enhancement_runs
    )
    notification: nt.Notification | None = strawberry.field(resolver=nt.notification)
    notification_list: nt.NotificationConnection = strawberry.field(resolver=nt.notification_list)
    notification_summary: nt.NotificationSummary = strawberry.field(resolver=nt.notification_summary)
    operation: nt.Operation | None = strawberry.field(resolver=nt.operation)


@strawberry.type
class Mutation:
    create_work_item_enhancement_run: en.CreateWorkItemEnhancementRunPayload = strawberry.mutation(
        resolver=en.create_work_item_enhancement_run
    )
    run_work_item_enhancement_action: en.RunWorkItemEnhancementActionPayload = strawberry.mutation(
        resolver=en.run_work_item_enhancement_action
    )
    apply_work_item_enhancement_drafts: en.ApplyWorkItemEnhancementDraftsPayload = strawberry.mutation(
        resolver=en.apply_work_item_enhancement_drafts
    )
    reject_draft: er.RejectDraftPayload = strawberry.mutation(resolver=er.reject_draft)
    cancel_enhancement_run: er.CancelEnhancementRunPayload = strawberry.mutation(resolver=er.cancel_enhancement_run)
    draft_notification_change: nt.NotificationChangeProposal = strawberry.mutation(
        resolver=nt.draft_notification_change
    )
    apply_notification_change: nt.NotificationPayload = strawberry.mutation(resolver=nt.apply_notification_change)


schema = strawberry.Schema(query=Query, mutation=Mutation, extensions=[*query_limits(), CodedErrors])

GRAPHQL_PATH = "/graphql"
_GRAPHIQL_PAGE = graphiql_page(GRAPHQL_PATH)


# No subscriptions exist, and the auth middleware guards HTTP only: the WebSocket transport accepts no protocol,
# so every WebSocket handshake at /graphql is refused before any operation runs.
_StrawberryController: Any = make_graphql_controller(
    schema,
    path=GRAPHQL_PATH,
    context_getter=context_getter,
    graphql_ide="graphiql",
    subscription_protocols=(),
)
# What a request Strawberry cannot take at all (no query, a body that is not JSON, `variables` that are not
# an object, a mutation over GET) answers: the status Strawberry chose, the error's code.
_HTTP_CODES = {400: "invalid_request", 404: "not_found", 405: "method_not_allowed", 415: "unsupported_media_type"}


class GraphQLController(_StrawberryController):
    """Strawberry's controller with our GraphiQL page, whose assets this server serves (no CDN), the input
    policy on the HTTP request, and a refused HTTP request answered as GraphQL JSON with `extensions.code`
    instead of plain text."""

    opt = {"input": OWN_INPUT}

    async def render_graphql_ide(self, request: Request[Any, Any, Any]) -> Response[str]:
        return Response(_GRAPHIQL_PAGE, media_type=MediaType.HTML)

    async def execute_request(self, request: Request[Any, Any, Any], context: Any, root_value: Any) -> Response[Any]:
        """Run the request; a request Strawberry refuses before GraphQL answers a coded error."""
        try:
            await check_http_input(request)
        except GroundworkError as error:
            return refusal(error)
        try:
            return await self.run(request, context=context, root_value=root_value)  # type: ignore[no-any-return]
        except HTTPException as error:
            code = _HTTP_CODES.get(error.status_code, "invalid_request")
            return Response(
                {"data": None, "errors": [{"message": error.reason, "extensions": {"code": code}}]},
                status_code=error.status_code,
                media_type=MediaType.JSON,
            )
