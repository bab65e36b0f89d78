"""Seed the demo workspace from the catalogue: once, then every later call only issues a key."""

from __future__ import annotations

from groundwork.config import Settings
from groundwork.demo import catalog
from groundwork.demo.context import seed_demo_context
from groundwork.demo.corpus import seed_demo_corpus
from groundwork.demo.notifications import seed_demo_notifications
from groundwork.persistence import db
from groundwork.persistence.repositories import work_items
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.tenancy import api_keys


async def seed_demo_data() -> bool:
    """Create the demo workspace and everything in it unless it exists; True when created now."""
    async with db.transaction():
        if await tenancy.get_workspace_by_slug(catalog.WORKSPACE_SLUG) is not None:
            return False
        workspace = await tenancy.create_workspace(catalog.WORKSPACE_SLUG, catalog.WORKSPACE_NAME)
        ws = workspace.id
        portfolio = await tenancy.create_portfolio(ws, catalog.PORTFOLIO_NAME)
        engagements = {
            e.name: (await tenancy.create_engagement(ws, portfolio.id, e.name)).id for e in catalog.ENGAGEMENTS
        }
        projects = {
            p.key: (await tenancy.create_project(ws, engagements[p.engagement], p.key, p.name)).id
            for p in catalog.PROJECTS
        }
        principals: dict[str, str] = {}
        for person in catalog.PRINCIPALS:
            row = await tenancy.create_principal(
                ws, person.name, kind=person.kind, display_name=person.display_name, is_admin=person.is_admin
            )
            principals[person.name] = row.id
            for project_key, role in person.memberships:
                await tenancy.add_membership(row.id, projects[project_key], role)
        for item in catalog.WORK_ITEMS:
            await work_items.insert_work_item(
                workspace_id=ws,
                project_id=projects[item.project_key],
                title=item.title,
                status=item.status,
                sprint=item.sprint,
                watchers=[principals[name] for name in item.watchers],
                fields=dict(item.fields),
                actor_id=principals["admin"],
                source="demo",
            )
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
        issued = await api_keys.issue_key(catalog.WORKSPACE_SLUG, "admin", None, admin=True)
    return issued.key
