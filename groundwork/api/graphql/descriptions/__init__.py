"""Descriptions of the schema's types, fields and arguments, in the specs' words where the specs have them.

A description written beside its field in the code wins; these catalogues describe the rest, and a root field
without either takes its resolver's docstring. `describe` fills them into the built schema, so introspection
and the printed SDL carry them alike; the schema test fails on anything left undescribed.
"""

from __future__ import annotations

import inspect
from typing import Any

import strawberry
from graphql import GraphQLInputObjectType, GraphQLObjectType, GraphQLSchema, get_named_type

from groundwork.api.graphql.descriptions import context_engine, enhancement, notifications, work_items
from groundwork.api.graphql.descriptions.shared import ARGUMENTS, FIELDS, connection_description

# "Type" -> its description; "Type.field" -> the field's; "Type.field(argument)" -> the argument's.
CATALOGUE: dict[str, str] = {
    **work_items.CATALOGUE,
    **enhancement.CATALOGUE,
    **context_engine.CATALOGUE,
    **notifications.CATALOGUE,
}


def resolver_docs(schema: strawberry.Schema) -> dict[str, str]:
    """ "Query.field" -> the docstring of its resolver, for every root field that has one."""
    docs: dict[str, str] = {}
    for root in ("Query", "Mutation"):
        definition = schema.get_type_by_name(root)
        for field in getattr(definition, "fields", []):
            resolver = field.base_resolver
            doc = inspect.getdoc(resolver.wrapped_func) if resolver is not None else None
            if doc:
                docs[f"{root}.{schema.config.name_converter.from_field(field)}"] = " ".join(doc.split())
    return docs


def _type_description(name: str, kind: Any) -> str | None:
    if name in CATALOGUE:
        return CATALOGUE[name]
    if isinstance(kind, GraphQLObjectType) and name.endswith("Connection") and "nodes" in kind.fields:
        return connection_description(get_named_type(kind.fields["nodes"].type).name)
    return None


def describe(strawberry_schema: strawberry.Schema) -> None:
    """Fill every missing description of the schema from the catalogues and the root resolvers' docstrings."""
    docs = resolver_docs(strawberry_schema)
    schema: GraphQLSchema = strawberry_schema._schema
    for name, kind in schema.type_map.items():
        if name.startswith("__") or not isinstance(kind, GraphQLObjectType | GraphQLInputObjectType):
            continue
        kind.description = kind.description or _type_description(name, kind)
        for field_name, field in kind.fields.items():
            key = f"{name}.{field_name}"
            field.description = field.description or CATALOGUE.get(key) or docs.get(key) or FIELDS.get(field_name)
            for argument_name, argument in getattr(field, "args", {}).items():
                argument.description = (
                    argument.description or CATALOGUE.get(f"{key}({argument_name})") or ARGUMENTS.get(argument_name)
                )
