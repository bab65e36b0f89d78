"""The OpenAPI document's problem answers come from the route table: a new route is documented as it is added."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Litestar, get, patch, post
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import OpenAPIType, Schema

from groundwork.api.app import create_app
from groundwork.api.documented import documented
from groundwork.api.openapi_problems import document_problems
from groundwork.config import Settings


@post("/api/v1/widgets", opt={"scope": "widgets:write", "idempotent": True})
async def create_widget(data: dict[str, Any]) -> dict[str, Any]:
    return data


@get("/api/v1/widgets/{widget_id:str}", opt={"scope": "widgets:read"})
async def get_widget(widget_id: str) -> dict[str, Any]:
    return {"id": widget_id}


@patch("/api/v1/widgets/{widget_id:str}", opt={"scope": "widgets:write"})
async def change_widget(widget_id: str, data: dict[str, Any]) -> dict[str, Any]:
    return data


@get("/health/live", opt={"auth": "public"})
async def live() -> dict[str, str]:
    return {"status": "ok"}


def _document() -> dict[str, Any]:
    app = Litestar([create_widget, get_widget, change_widget, live], openapi_config=OpenAPIConfig("t", "1"))
    document_problems(app)
    return app.openapi_schema.to_schema()


def test_a_new_route_documents_its_problem_answers_from_its_declarations() -> None:
    paths = _document()["paths"]
    create = paths["/api/v1/widgets"]["post"]
    assert set(create["responses"]) == {"201", "400", "401", "403", "404", "409", "413", "415", "422", "429", "503"}
    problem = create["responses"]["409"]["content"]["application/problem+json"]["schema"]
    assert problem == {"$ref": "#/components/schemas/Problem"}
    assert "Retry-After" in create["responses"]["429"]["headers"]
    header = next(p for p in create["parameters"] if p["name"] == "Idempotency-Key")
    assert header["in"] == "header" and header["required"] is True and header["schema"]["maxLength"] == 255
    read = paths["/api/v1/widgets/{widget_id}"]["get"]
    assert set(read["responses"]) == {"200", "400", "401", "403", "404", "422", "429", "503"}
    assert all(p["name"] != "Idempotency-Key" for p in read["parameters"])
    assert {"409", "415"} <= set(paths["/api/v1/widgets/{widget_id}"]["patch"]["responses"])
    # A public probe needs no key and is not rate limited: neither is documented. It takes no query parameter.
    assert set(paths["/health/live"]["get"]["responses"]) == {"200", "400"}


def test_the_problem_schema_requires_the_stable_code() -> None:
    problem = _document()["components"]["schemas"]["Problem"]
    assert set(problem["required"]) == {"type", "title", "status", "detail", "code"}
    assert problem["properties"]["errors"]["items"]["required"] == ["path", "message"]


SIGNED_LINK_PATHS = ("/api/v1/notification-actions/", "/api/v1/notification-views/")


def test_every_operation_of_the_public_api_documents_429_and_every_keyed_one_401() -> None:
    document = create_app(Settings(database_url="postgresql://unused/db")).openapi_schema.to_schema()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            statuses = set(operation["responses"])
            if not path.startswith(("/health/", "/schema")):
                assert "429" in statuses, (method, path)
            # The signed links of e-mails (action and View pages) are the only API routes opened without a key.
            if path.startswith("/api/") and not path.startswith(SIGNED_LINK_PATHS):
                assert {"401", "503"} <= statuses, (method, path)


class GadgetBody(msgspec.Struct, forbid_unknown_fields=True):
    # The service requires `name` and answers its own coded 422 when it is missing or null.
    __documented_required__: ClassVar[tuple[str, ...]] = ("name",)
    name: Annotated[str, documented(minLength=1)] | None = None
    note: str | None = None


@post("/api/v1/gadgets", opt={"scope": "gadgets:write", "idempotent": True})
async def create_gadget(data: GadgetBody) -> dict[str, Any]:
    return {}


@get("/api/v1/gadgets", opt={"scope": "gadgets:read", "required_query": {"query": Schema(type=OpenAPIType.STRING)}})
async def search_gadgets() -> dict[str, Any]:
    return {}


def test_fields_a_service_requires_are_documented_required_and_not_nullable_and_the_rest_stay_optional() -> None:
    app = Litestar([create_gadget, search_gadgets], openapi_config=OpenAPIConfig("t", "1"))
    document_problems(app)
    document = app.openapi_schema.to_schema()
    body = document["components"]["schemas"]["GadgetBody"]
    assert body["required"] == ["name"] and body["additionalProperties"] is False
    assert body["properties"]["name"] == {"type": "string", "minLength": 1}
    assert {"type": "null"} in body["properties"]["note"]["oneOf"]  # optional and nullable as declared
    [query] = [p for p in document["paths"]["/api/v1/gadgets"]["get"]["parameters"] if p["name"] == "query"]
    assert query["in"] == "query" and query["required"] is True and query["schema"] == {"type": "string"}
