"""The browser pages (Swagger UI at /schema, GraphiQL at /graphql) load every asset from this server."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlsplit

import httpx
import pytest

HTML = {"Accept": "text/html"}
# What each kind of asset must be served as.
MEDIA_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


class AssetReferences(HTMLParser):
    """Every URL a page makes the browser load: script sources, stylesheets, icons, images, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag in ("script", "img", "iframe") and values.get("src"):
            self.urls.append(str(values["src"]))
        if tag == "link" and values.get("href"):
            self.urls.append(str(values["href"]))


def asset_references(page: str) -> list[str]:
    parser = AssetReferences()
    parser.feed(page)
    return parser.urls


async def assert_page_loads_only_local_assets(http: httpx.AsyncClient, path: str, expected: set[str]) -> None:
    response = await http.get(path, headers=HTML)
    assert response.status_code == 200, path
    assert response.headers["content-type"].startswith("text/html")
    urls = asset_references(response.text)
    assert set(urls) == expected, f"{path} references {urls}"
    for url in urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc and url.startswith("/"), f"{path} loads {url} from elsewhere"
        # No key: the pages must open for anyone, like /schema itself.
        asset = await http.get(url)
        assert asset.status_code == 200, url
        suffix = url[url.rfind(".") :]
        assert asset.headers["content-type"].startswith(MEDIA_TYPES[suffix]), (url, asset.headers["content-type"])
        assert len(asset.content) > 100, url
    assert "unpkg.com" not in response.text and "jsdelivr" not in response.text


SWAGGER_ASSETS = {
    "/static/swagger-ui/swagger-ui-bundle.js",
    "/static/swagger-ui/swagger-ui-standalone-preset.js",
    "/static/swagger-ui/swagger-ui.css",
    "/static/swagger-ui/favicon-32x32.png",
}
GRAPHIQL_ASSETS = {
    "/static/graphiql/react.production.min.js",
    "/static/graphiql/react-dom.production.min.js",
    "/static/graphiql/graphiql.min.js",
    "/static/graphiql/graphiql-plugin-explorer.umd.js",
    "/static/graphiql/graphiql.min.css",
    "/static/graphiql/style.css",
}


async def test_swagger_ui_at_schema_loads_its_assets_from_this_server(client: httpx.AsyncClient) -> None:
    await assert_page_loads_only_local_assets(client, "/schema", SWAGGER_ASSETS)
    await assert_page_loads_only_local_assets(client, "/schema/swagger", SWAGGER_ASSETS)


async def test_the_internal_listeners_schema_page_loads_its_assets_from_that_listener(
    internal_client: httpx.AsyncClient,
) -> None:
    await assert_page_loads_only_local_assets(internal_client, "/schema", SWAGGER_ASSETS)


async def test_graphiql_page_loads_its_assets_from_this_server(client: httpx.AsyncClient) -> None:
    await assert_page_loads_only_local_assets(client, "/graphql", GRAPHIQL_ASSETS)


async def test_no_other_html_page_references_an_external_host(client: httpx.AsyncClient) -> None:
    # The OAuth2 redirect page of Swagger UI and the schema router's 404 page load nothing at all.
    await assert_page_loads_only_local_assets(client, "/schema/oauth2-redirect.html", set())
    # The page behind an e-mail's action link (here: an invalid one) is self-contained too.
    action = await client.get("/api/v1/notification-actions/not-a-token", headers=HTML)
    assert action.headers["content-type"].startswith("text/html") and action.status_code >= 400
    assert asset_references(action.text) == []
    # The CDN-only renderers (Scalar, ReDoc, RapiDoc, Elements) are not served.
    for page in ("/schema/scalar", "/schema/redoc", "/schema/rapidoc", "/schema/elements"):
        response = await client.get(page, headers=HTML)
        assert response.status_code == 404, page
        assert asset_references(response.text) == [], page


@pytest.mark.parametrize(
    "path",
    [
        "/static/swagger-ui/swagger-editor-bundle.js",  # in the package, but no page of ours loads it
        "/static/graphiql/views.py",
        "/static/graphiql/..%2F__init__.py",
        "/static/graphiql/%2E%2E%2Fviews.py",
        "/static/nothing/graphiql.min.js",
    ],
)
async def test_only_the_pages_assets_are_served(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")


async def test_the_openapi_documents_declare_the_bearer_key_so_swagger_ui_can_send_it(
    client: httpx.AsyncClient, internal_client: httpx.AsyncClient
) -> None:
    for http in (client, internal_client):
        spec = (await http.get("/schema/openapi.json")).json()
        assert spec["components"]["securitySchemes"]["apiKey"] == {
            "type": "http",
            "scheme": "bearer",
            "description": "A Groundwork API key: `Authorization: Bearer gw_...`.",
        }
        assert spec["security"] == [{"apiKey": []}]
