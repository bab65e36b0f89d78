"""The JavaScript and CSS of the API's browser pages, served from the Python packages that ship them.

`/schema` (Swagger UI, PyPI `swagger-ui-py`) and the GraphiQL page at `/graphql` (PyPI
`graphene-django-graphiql-static`) load every asset from this server under `/static/`, so both work
on a machine with no internet. The files are read where pip installed them; neither package's Python
code is imported (the GraphiQL one imports Django), only its directory is located.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from litestar import get
from litestar.exceptions import NotFoundException
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.response import File

STATIC_PREFIX = "/static"
JAVASCRIPT = "text/javascript; charset=utf-8"
CSS = "text/css; charset=utf-8"
PNG = "image/png"


@dataclass(frozen=True)
class AssetBundle:
    """The files one page needs from one installed package: URL name -> (file name, media type)."""

    package: str
    directory: tuple[str, ...]
    files: dict[str, str]

    @property
    def root(self) -> Path:
        """The package's directory holding the files (located without importing the package's modules)."""
        return _package_directory(self.package).joinpath(*self.directory)


# Only the files the pages load are served: the packages hold more (Swagger Editor, Django templates).
BUNDLES: dict[str, AssetBundle] = {
    "swagger-ui": AssetBundle(
        package="swagger_ui",
        directory=("static",),
        files={
            "swagger-ui-bundle.js": JAVASCRIPT,
            "swagger-ui-standalone-preset.js": JAVASCRIPT,
            "swagger-ui.css": CSS,
            "favicon-32x32.png": PNG,
        },
    ),
    "graphiql": AssetBundle(
        package="graphene_django_graphiql_static",
        directory=("static", "graphene_django_graphiql_static"),
        files={
            "react.production.min.js": JAVASCRIPT,
            "react-dom.production.min.js": JAVASCRIPT,
            "graphiql.min.js": JAVASCRIPT,
            "graphiql.min.css": CSS,
            "graphiql-plugin-explorer.umd.js": JAVASCRIPT,
            "style.css": CSS,
        },
    ),
}


def asset_url(bundle: str, name: str) -> str:
    """The URL path this server answers `name` of `bundle` at."""
    if name not in BUNDLES[bundle].files:
        raise KeyError(f"{bundle}/{name} is not a served asset")
    return f"{STATIC_PREFIX}/{bundle}/{name}"


@cache
def _package_directory(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise RuntimeError(f"the package {package!r} that ships the API's browser assets is not installed")
    return Path(locations[0])


@get(
    f"{STATIC_PREFIX}/{{bundle:str}}/{{name:str}}",
    opt={"auth": "public"},
    include_in_schema=False,
    sync_to_thread=False,
)
def browser_asset(bundle: str, name: str) -> File:
    """One asset of the browser pages, streamed from its installed package; cacheable for a day."""
    entry = BUNDLES.get(bundle)
    media_type = entry.files.get(name) if entry is not None else None
    if entry is None or media_type is None:
        raise NotFoundException("No such asset.")
    return File(
        path=entry.root / name,
        media_type=media_type,
        content_disposition_type="inline",
        headers={"Cache-Control": "public, max-age=86400"},
    )


def swagger_render_plugin() -> SwaggerRenderPlugin:
    """Swagger UI at `/schema` (and `/schema/swagger`), its assets and favicon from this server."""
    return SwaggerRenderPlugin(
        js_url=asset_url("swagger-ui", "swagger-ui-bundle.js"),
        css_url=asset_url("swagger-ui", "swagger-ui.css"),
        standalone_preset_js_url=asset_url("swagger-ui", "swagger-ui-standalone-preset.js"),
        favicon=f"<link rel='icon' type='image/png' href='{asset_url('swagger-ui', 'favicon-32x32.png')}'>",
        path=["/", "/swagger"],
    )


# Declared in the OpenAPI documents so Swagger UI's "Authorize" takes a key and "Try it out" sends it.
API_KEY_COMPONENTS = Components(
    security_schemes={
        "apiKey": SecurityScheme(
            type="http", scheme="bearer", description="A Groundwork API key: `Authorization: Bearer gw_...`."
        )
    }
)
API_KEY_SECURITY: list[dict[str, list[str]]] = [{"apiKey": []}]
