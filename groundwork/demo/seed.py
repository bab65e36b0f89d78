"""Seed the demo workspace from its data files: once, then every later call only issues a key.

The workspace, its portfolio, engagements, projects, principals and memberships are written through
the tenancy repository; the work items go through the importer `groundwork import` runs.
"""

from __future__ import annotations

from groundwork.config import Settings
from groundwork.demo.context import seed_demo_context
from groundwork.demo.corpus import seed_demo_corpus
from groundwork.demo.notifications import seed_demo_notifications
from groundwork.demo.records import WORKSPACE_SLUG, lines, records
from groundwork.persistence import db
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.tenancy import api_keys
from groundwork.services.work_items.importer import import_work_items

# The principal the work items' history names as their creator.
IMPORTER = "admin"


async def seed_demo_data() -> bool:
    """Create the demo workspace and everything in it unless it exists; True when created now."""
    async with db.transaction():
        if await tenancy.get_workspace_by_slug(WORKSPACE_SLUG) is not None:
            return False
        [workspace_record] = records("workspaces")
        workspace = await tenancy.create_workspace(WORKSPACE_SLUG, workspace_record["name"])
        ws = workspace.id
        portfolios = {p["name"]: (await tenancy.create_portfolio(ws, p["name"])).id for p in records("portfolios")}
        engagements = {
            e["name"]: (await tenancy.create_engagement(ws, portfolios[e["portfolio"]], e["name"])).id
            for e in records("engagements")
        }
        projects = {
            p["key"]: (await tenancy.create_project(ws, engagements[p["engagement"]], p["key"], p["name"])).id
            for p in records("projects")
        }
        principals: dict[str, str] = {}
        for person in records("principals"):
            row = await tenancy.create_principal(
                ws,
                person["name"],
                kind=person["kind"],
                display_name=person["display_name"],
                is_admin=person["is_admin"],
            )
            principals[person["name"]] = row.id
        for membership in records("memberships"):
            await tenancy.add_membership(
                principals[membership["principal"]], projects[membership["project"]], membership["role"]
            )
        report = await import_work_items(WORKSPACE_SLUG, IMPORTER, lines("work_items"), source="demo")
        if report.rejected:
            # Shipped data that does not import is a defect: refuse it whole rather than seed part of the demo.
            number, reason = report.rejected[0]
            raise RuntimeError(f"demo work_items.jsonl line {number}: {reason}")
    return True


async def seed_demo(dsn: str) -> str:
    """Seed the demo data if needed and return a new API key with every scope for `admin`."""
    async with db.connection(dsn):
        await seed_demo_data()
        # PostgreSQL only: the worker's index follower indexes the documents within seconds of starting.
        await seed_demo_corpus()
        await seed_demo_notifications(Settings(database_url=dsn))
        # The built-in providers and a demo financial provider contribute once (a repeat changes nothing).
        await seed_demo_context()
        issued = await api_keys.issue_key(WORKSPACE_SLUG, "admin", None, admin=True)
    return issued.key
