"""The schema's conventions, read by introspection so that a new field that breaks one fails here: every list
that pages is a Relay connection; every type, field, argument and enum value is described."""

from __future__ import annotations

import re

from graphql import (
    GraphQLField,
    GraphQLList,
    GraphQLObjectType,
    get_introspection_query,
    get_named_type,
    get_nullable_type,
)

from groundwork.api.graphql.schema import schema

# The spec fixes this one as a plain list; its connection is `workItemEnhancementDraftConnection`.
SPEC_LISTS = {"workItemEnhancementDrafts"}


def _object(field: GraphQLField) -> GraphQLObjectType | None:
    named = get_named_type(field.type)
    return named if isinstance(named, GraphQLObjectType) else None


def _connection_problems(connection: GraphQLObjectType) -> list[str]:
    fields = connection.fields
    problems = [f"{connection.name} lacks {name}" for name in ("edges", "nodes", "pageInfo") if name not in fields]
    if problems:
        return problems
    edge = get_named_type(fields["edges"].type)
    node = get_named_type(fields["nodes"].type)
    page_info = get_named_type(fields["pageInfo"].type)
    assert isinstance(edge, GraphQLObjectType) and isinstance(page_info, GraphQLObjectType)
    if not isinstance(get_nullable_type(fields["edges"].type), GraphQLList):
        problems.append(f"{connection.name}.edges is not a list")
    if set(edge.fields) < {"cursor", "node"} or get_named_type(edge.fields["node"].type) is not node:
        problems.append(f"{connection.name}'s edge is not {{cursor node}} of its nodes' type")
    if not {"hasNextPage", "endCursor"} <= set(page_info.fields):
        problems.append(f"{connection.name}.pageInfo lacks hasNextPage or endCursor")
    return problems


def _paged_root_fields() -> dict[str, GraphQLField]:
    query = schema._schema.query_type
    assert query is not None
    return {
        name: field
        for name, field in query.fields.items()
        if ("after" in field.args or "pagination" in field.args) and field.deprecation_reason is None
    }


def test_every_root_field_that_pages_answers_a_relay_connection() -> None:
    problems: list[str] = []
    paged = _paged_root_fields()
    assert {"workItems", "notificationList", "contextPassages", "workItemEnhancementRuns"} <= set(paged)
    for name, field in paged.items():
        if name in SPEC_LISTS:
            continue
        connection = _object(field)
        if connection is None or isinstance(get_nullable_type(field.type), GraphQLList):
            problems.append(f"{name} pages but answers {field.type}")
            continue
        problems += _connection_problems(connection)
    assert not problems, problems


def test_every_type_with_page_info_is_a_whole_connection() -> None:
    types = schema._schema.type_map.values()
    connections = [t for t in types if isinstance(t, GraphQLObjectType) and "pageInfo" in t.fields]
    assert len(connections) >= 10
    problems = [p for c in connections for p in _connection_problems(c)]
    assert not problems, problems


def test_old_paging_names_are_served_but_deprecated() -> None:
    types = schema._schema.type_map
    page_info, runs = types["PageInfo"], types["WorkItemEnhancementRunConnection"]
    assert isinstance(page_info, GraphQLObjectType) and isinstance(runs, GraphQLObjectType)
    for owner, name in ((page_info, "nextCursor"), (page_info, "hasMore"), (runs, "nextCursor"), (runs, "hasMore")):
        assert owner.fields[name].deprecation_reason, f"{owner.name}.{name}"
    assert not page_info.fields["endCursor"].deprecation_reason
    query = schema._schema.query_type
    assert query is not None
    for renamed, successor in (
        ("contextCorpusSearch", "contextPassages"),
        ("workItemEnhancementArtifacts", "workItemEnhancementArtifactConnection"),
    ):
        assert successor in (query.fields[renamed].deprecation_reason or ""), renamed
    old, new = query.fields["contextCorpusSearch"], query.fields["contextPassages"]
    assert get_named_type(old.type) is get_named_type(new.type) and set(old.args) == set(new.args)


# Names the specs show for root fields: exact, never deprecated, whatever the rule below says.
SPEC_NAMES = {
    "contextQuery",
    "contextEngineSearch",
    "contextEnginePackageEvidence",
    "contextEngineProviders",
    "workItemEnhancementRun",
    "workItemEnhancementDrafts",
    "notification",
    "notificationList",
    "createWorkItemEnhancementRun",
    "applyWorkItemEnhancementDrafts",
    "draftNotificationChange",
    "applyNotificationChange",
}
# What a query's name must not start with: a read is named for what it answers, not for the act of reading.
READ_VERBS = ("get", "list", "fetch", "find", "search", "query", "read", "load")


def test_root_fields_are_named_noun_nouns_or_verb_noun_and_keep_the_spec_names() -> None:
    query, mutation = schema._schema.query_type, schema._schema.mutation_type
    assert query is not None and mutation is not None
    assert set(query.fields) | set(mutation.fields) >= SPEC_NAMES
    spec_deprecated = [n for n in SPEC_NAMES if (query.fields.get(n) or mutation.fields[n]).deprecation_reason]
    assert not spec_deprecated
    drifting = [
        name
        for name, field in query.fields.items()
        if name not in SPEC_NAMES
        and not field.deprecation_reason
        and (name.startswith(READ_VERBS) or name.endswith(("List", "Search")))
    ]
    assert not drifting, drifting
    unnamed_acts = [name for name in mutation.fields if not re.match(r"^[a-z]+[A-Z]", name)]
    assert not unnamed_acts, unnamed_acts


def test_introspection_describes_every_type_field_argument_and_enum_value() -> None:
    result = schema.execute_sync(get_introspection_query(descriptions=True, input_value_deprecation=True))
    assert result.errors is None and result.data is not None
    undescribed: list[str] = []
    for kind in result.data["__schema"]["types"]:
        name = kind["name"]
        if name.startswith("__") or name in ("String", "Int", "Float", "Boolean", "ID"):
            continue
        if not kind["description"]:
            undescribed.append(name)
        for field in (kind["fields"] or []) + (kind["inputFields"] or []):
            if not field["description"]:
                undescribed.append(f"{name}.{field['name']}")
            undescribed += [
                f"{name}.{field['name']}({a['name']})" for a in field.get("args", []) if not a["description"]
            ]
        undescribed += [f"{name}.{v['name']}" for v in kind["enumValues"] or [] if not v["description"]]
    assert not undescribed, undescribed


def test_enums_carry_the_wire_values_of_their_closed_sets() -> None:
    from groundwork.domain.enhancement.model import RUN_STATES
    from groundwork.domain.notifications.inbox import STATUSES

    types = schema._schema.type_map
    assert list(types["NotificationStatus"].values) == list(STATUSES)  # type: ignore[attr-defined]
    assert list(types["WorkItemEnhancementRunState"].values) == list(RUN_STATES)  # type: ignore[attr-defined]
    notification = types["Notification"]
    assert isinstance(notification, GraphQLObjectType)
    assert get_named_type(notification.fields["status"].type).name == "NotificationStatus"
    assert get_named_type(notification.fields["updatedAt"].type).name == "DateTime"
