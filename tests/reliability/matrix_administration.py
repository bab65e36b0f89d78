"""The authorization matrix's administration rows (issue 33): scope `workspace:admin`, `/me`, the directory, keys."""

from __future__ import annotations

from tests.reliability.matrix_rows import (
    INSUFFICIENT_SCOPE,
    LISTED,
    VALIDATION_FAILED,
    Rest,
    _key,
)

ADMIN = "workspace:admin"

ADMINISTRATION_REST: dict[str, Rest] = {
    # Administration (issue 33): an admin of another workspace administers its own; a non-admin never holds the scope.
    "POST /api/v1/portfolios": Rest(
        ADMIN, body=lambda ids: {"name": "Intruder"}, unseen_other=LISTED, unseen_invisible=INSUFFICIENT_SCOPE
    ),
    "GET /api/v1/portfolios": Rest(ADMIN, unseen_other=LISTED, unseen_invisible=INSUFFICIENT_SCOPE),
    "POST /api/v1/engagements": Rest(
        ADMIN,
        body=lambda ids: {"name": "Intruder", "portfolio_id": ids["portfolio"]},
        unseen_other=VALIDATION_FAILED,
        unseen_invisible=INSUFFICIENT_SCOPE,
    ),
    "GET /api/v1/engagements": Rest(
        ADMIN,
        query=lambda ids: {"portfolio_id": ids["portfolio"]},
        unseen_other=LISTED,
        unseen_invisible=INSUFFICIENT_SCOPE,
    ),
    "POST /api/v1/projects": Rest(
        ADMIN,
        body=lambda ids: {"key": "INTRUDER", "name": "Intruder", "engagement_id": ids["engagement"]},
        unseen_other=VALIDATION_FAILED,
        unseen_invisible=INSUFFICIENT_SCOPE,
    ),
    "PATCH /api/v1/projects/{project_id}": Rest(
        ADMIN, body=lambda ids: {"name": "Overwritten", "archived": True}, unseen_invisible=INSUFFICIENT_SCOPE
    ),
    "GET /api/v1/projects/{project_id}/members": Rest(ADMIN, unseen_invisible=INSUFFICIENT_SCOPE),
    "PUT /api/v1/projects/{project_id}/members/{principal_id}": Rest(
        ADMIN,
        body=lambda ids: {"role": "lead"},
        params={"principal_id": "recipient"},
        unseen_invisible=INSUFFICIENT_SCOPE,
    ),
    "DELETE /api/v1/projects/{project_id}/members/{principal_id}": Rest(
        ADMIN, params={"principal_id": "recipient"}, unseen_invisible=INSUFFICIENT_SCOPE
    ),
    "POST /api/v1/principals": Rest(
        ADMIN,
        body=lambda ids: {"name": f"intruder-{_key()[:8]}", "kind": "user"},
        unseen_other=LISTED,
        unseen_invisible=INSUFFICIENT_SCOPE,
    ),
    "POST /api/v1/projects/{project_id}/imports": Rest(
        ADMIN,
        body=lambda ids: {"format": "github", "content": '[{"number": 1, "title": "Intruder", "state": "open"}]'},
        unseen_invisible=INSUFFICIENT_SCOPE,
    ),
    "GET /api/v1/projects/{project_id}/imports/{import_id}": Rest(
        ADMIN, params={"project_id": "import_project", "import_id": "import"}, unseen_invisible=INSUFFICIENT_SCOPE
    ),
    # The caller itself, and the people who share a project with it (either read scope; checked by the service).
    "GET /api/v1/me": Rest(None, unseen_other=LISTED),
    "GET /api/v1/principals": Rest(None, unseen_other=LISTED),
    # Keys: your own, or as an admin any principal's of your workspace.
    "POST /api/v1/api-keys": Rest(
        None,
        body=lambda ids: {"principal_id": ids["recipient"], "scopes": ["work-items:read"]},
        unseen_other=VALIDATION_FAILED,
    ),
    "GET /api/v1/api-keys": Rest(None, unseen_other=LISTED),
    "DELETE /api/v1/api-keys/{api_key_id}": Rest(None, params={"api_key_id": "api_key"}),
}

# The administration routes (issue 33): refused to a viewer, a contributor and a connected app's key alike.
ADMINISTRATION = (
    *(route for route, row in ADMINISTRATION_REST.items() if row.scope == ADMIN),
    "POST /api/v1/api-keys",
    "GET /api/v1/api-keys",
    "DELETE /api/v1/api-keys/{api_key_id}",
)
