"""What `groundwork up` tells a team on a data dir without any workspace: how to create its own."""

from __future__ import annotations

import asyncio

FIRST_RUN_HINT = (
    "No workspace yet: create yours with `groundwork workspaces create SLUG --name NAME --admin PRINCIPAL` "
    "(or start with --demo)."
)


def has_workspace(dsn: str) -> bool:
    """Whether the database at `dsn` holds any workspace."""
    from groundwork.persistence import db
    from groundwork.services.tenancy.workspaces import list_workspaces

    async def main() -> bool:
        async with db.connection(dsn):
            return bool(await list_workspaces())

    return asyncio.run(main())
