"""services/work_items/items: writes need a writing role, the version guard refuses a stale change and keeps the item,
and every change is in the history with its door."""

from __future__ import annotations

import pytest

from groundwork.domain.errors import NotFound, PermissionDenied, ValidationFailed, VersionConflict
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.work_items import format_version
from groundwork.services.tenancy.api_keys import resolve_key
from groundwork.services.work_items import items
from tests.conftest import Workspace


async def _principal(workspace: Workspace, name: str, memberships: dict[str, str]) -> Principal:
    principal = await resolve_key(await workspace.key(name, None, memberships=memberships))
    assert principal is not None
    return principal


async def test_a_contributor_creates_and_changes_an_item_and_history_names_each_change(workspace: Workspace) -> None:
    writer = await _principal(workspace, "wes", {"ALPHA": "contributor"})
    new = items.NewWorkItem(workspace.projects["ALPHA"], "  Retry the settlement upload  ", fields={"estimate": 3})
    created = await items.create_work_item(writer, new, source="rest")
    assert (created.title, created.status, created.fields) == (
        "Retry the settlement upload",
        "backlog",
        {"estimate": 3},
    )
    change = items.WorkItemChanges(format_version(created.version), status="todo", fields={"description": "Why"})
    updated = await items.update_work_item(writer, created.id, change, source="graphql")
    assert (updated.status, updated.fields) == ("todo", {"estimate": 3, "description": "Why"})
    history = await items.work_item_history(writer, created.id)
    assert [h.source for h in history] == ["rest", "graphql"]
    assert sorted(history[-1].changes) == ["description", "status"]
    assert history[-1].version_after == updated.version


async def test_a_stale_version_is_refused_and_changes_nothing(workspace: Workspace) -> None:
    writer = await _principal(workspace, "sam", {"ALPHA": "lead"})
    created = await items.create_work_item(
        writer, items.NewWorkItem(workspace.projects["ALPHA"], "Item"), source="rest"
    )
    stale = format_version(created.version)
    await items.update_work_item(writer, created.id, items.WorkItemChanges(stale, title="First"), source="rest")
    with pytest.raises(VersionConflict) as refused:
        await items.update_work_item(writer, created.id, items.WorkItemChanges(stale, title="Second"), source="rest")
    current = await items.get_work_item(writer, created.id)
    assert current.title == "First"
    assert refused.value.extra["current_version"] == format_version(current.version)


async def test_an_unchanged_update_makes_no_new_version_and_no_history(workspace: Workspace) -> None:
    writer = await _principal(workspace, "una", {"ALPHA": "lead"})
    created = await items.create_work_item(
        writer, items.NewWorkItem(workspace.projects["ALPHA"], "Same"), source="rest"
    )
    same = await items.update_work_item(
        writer, created.id, items.WorkItemChanges(format_version(created.version), title="Same"), source="rest"
    )
    assert same.version == created.version
    assert len(await items.work_item_history(writer, created.id)) == 1


async def test_a_viewer_may_read_but_not_write_and_a_stranger_sees_nothing(workspace: Workspace) -> None:
    lead = await _principal(workspace, "lou", {"ALPHA": "lead"})
    viewer = await _principal(workspace, "val", {"ALPHA": "viewer"})
    stranger = await _principal(workspace, "stu", {"BETA": "lead"})
    created = await items.create_work_item(lead, items.NewWorkItem(workspace.projects["ALPHA"], "Mine"), source="rest")
    assert (await items.get_work_item(viewer, created.id)).id == created.id
    with pytest.raises(PermissionDenied):
        await items.create_work_item(viewer, items.NewWorkItem(workspace.projects["ALPHA"], "No"), source="rest")
    with pytest.raises(NotFound):
        await items.get_work_item(stranger, created.id)
    listed, _ = await items.list_work_items(stranger)
    assert created.id not in [item.id for item in listed]
    assert [p.key for p in await items.list_projects(stranger)] == ["BETA"]


@pytest.mark.parametrize(
    ("new", "path"),
    [
        ({"title": ""}, "title"),
        ({"title": "T", "status": "shipped"}, "status"),
        ({"title": "T", "fields": {"colour": "red"}}, "fields.colour"),
        ({"title": "T", "watchers": ["prn_nobody"]}, "watchers"),
    ],
)
async def test_an_invalid_item_is_refused_naming_the_field_and_nothing_is_created(
    workspace: Workspace, new: dict[str, object], path: str
) -> None:
    writer = await _principal(workspace, "iva", {"ALPHA": "lead"})
    with pytest.raises(ValidationFailed) as refused:
        await items.create_work_item(writer, items.NewWorkItem(workspace.projects["ALPHA"], **new), source="rest")  # type: ignore[arg-type]
    assert path in [error.path for error in refused.value.errors]
    listed, _ = await items.list_work_items(writer, project_id=workspace.projects["ALPHA"])
    assert listed == []
