"""Our GraphiQL page for `/graphql`: GraphiQL and React from the installed package, nothing from a CDN."""

from __future__ import annotations

import json
from html import escape

from groundwork.api.browser_assets import asset_url

# Shown in the query editor of a first visit; GraphQL comments, so running it as-is asks for `viewer`.
_WELCOME = """# Groundwork GraphQL. Queries need an API key:
# open "Headers" below and enter
#   {"Authorization": "Bearer gw_..."}
# (`groundwork up --demo` prints one;
#  `groundwork keys create` mints more).
# The schema and its docs load without a key.
query Viewer {
  viewer {
    name
    kind
    scopes
  }
}
"""


def graphiql_page(endpoint: str) -> str:
    """The HTML of the GraphiQL page that queries `endpoint`."""

    def script(name: str) -> str:
        return f'<script src="{escape(asset_url("graphiql", name))}"></script>'

    def stylesheet(name: str) -> str:
        return f'<link rel="stylesheet" href="{escape(asset_url("graphiql", name))}">'

    # JSON inside <script>: "</" is escaped so no value can close the element.
    settings = json.dumps({"endpoint": endpoint, "welcome": _WELCOME}).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Groundwork GraphiQL</title>
<style>html, body {{ height: 100%; margin: 0; }} #graphiql {{ height: 100vh; }}</style>
{stylesheet("graphiql.min.css")}
{stylesheet("style.css")}
</head>
<body>
<div id="graphiql">Loading GraphiQL...</div>
{script("react.production.min.js")}
{script("react-dom.production.min.js")}
{script("graphiql.min.js")}
{script("graphiql-plugin-explorer.umd.js")}
<script>
  const settings = {settings};
  const fetcher = GraphiQL.createFetcher({{ url: settings.endpoint }});
  function GroundworkGraphiQL() {{
    // The explorer edits the same query as the editor (the plugin is a hook in this version).
    const [query, setQuery] = React.useState(settings.welcome);
    const explorer = GraphiQLPluginExplorer.useExplorerPlugin({{ query, onEdit: setQuery }});
    return React.createElement(GraphiQL, {{
      fetcher,
      query,
      onEditQuery: setQuery,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
      defaultEditorToolsVisibility: "headers",
      plugins: [explorer],
    }});
  }}
  ReactDOM.render(React.createElement(GroundworkGraphiQL), document.getElementById("graphiql"));
</script>
</body>
</html>
"""
