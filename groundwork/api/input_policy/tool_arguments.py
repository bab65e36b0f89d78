"""The policy on MCP tool arguments: every tool's input schema says `additionalProperties: false` and the
arguments are validated strictly against it (no `"5"` for 5, no `"yes"` or 1 for true, no JSON text for
an array); `confirm` is `{"const": true}`. Refusals are 400 `invalid_request` naming each argument."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from pydantic import BaseModel, ConfigDict, ValidationError

from groundwork.api.input_policy.wording import CONFIRM, CONFIRM_ACCEPTED, accepted, join_path
from groundwork.domain.errors import FieldError, InvalidRequest

# pydantic's error types, as the JSON kind the argument takes.
_KIND_OF_ERROR = {
    "bool_type": "boolean",
    "int_type": "integer",
    "float_type": "number",
    "string_type": "string",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
}
# What pydantic adds to an error's location for the member of a union it tried (not a name the caller wrote).
_UNION_MEMBERS = frozenset({"str", "int", "bool", "float", "list", "dict", "none", "null"})


class StrictArguments(FuncMetadata):
    """The SDK's argument handling without its leniency: a string is never parsed as JSON for another kind."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        """The arguments as sent."""
        return data


def _strict_model(model: type[BaseModel]) -> type[BaseModel]:
    config = ConfigDict(strict=True, extra="forbid", arbitrary_types_allowed=True)
    return type(model.__name__, (model,), {"model_config": config, "__module__": model.__module__})


def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True)
    properties: dict[str, Any] = schema.setdefault("properties", {})
    if CONFIRM in properties:
        properties[CONFIRM] = {
            "const": True,
            "description": "true after the user confirmed; anything else changes nothing",
        }
        schema["required"] = sorted({*schema.get("required", []), CONFIRM})
    schema["additionalProperties"] = False
    return schema


def make_strict(tool: Tool, output_schema: dict[str, Any] | None = None) -> None:
    """Give `tool` a strict argument model and the input schema that says so (and `output_schema`, if given)."""
    metadata = tool.fn_metadata
    model = _strict_model(metadata.arg_model)
    tool.fn_metadata = StrictArguments(
        arg_model=model,  # type: ignore[arg-type]
        output_schema=output_schema if output_schema is not None else metadata.output_schema,
        output_model=metadata.output_model,
        wrap_output=metadata.wrap_output,
    )
    tool.parameters = _input_schema(model)


def strict_tools(server: MCPServer, output_schemas: Mapping[str, dict[str, Any]] | None = None) -> None:
    """Put every tool registered on `server` under the policy, each with its output schema from `output_schemas`."""
    for tool in server._tool_manager.list_tools():
        make_strict(tool, (output_schemas or {}).get(tool.name))
        tool.__dict__.pop("output_schema", None)  # a cached_property of the SDK's Tool: read the new metadata


def _path(location: tuple[Any, ...]) -> str:
    path = ""
    for part in location:
        if isinstance(part, int):
            path = join_path(path, part)
        elif part not in _UNION_MEMBERS and "[" not in str(part):
            path = join_path(path, str(part))
    return path or "arguments"


def argument_errors(error: ValidationError, tool: Tool | None) -> InvalidRequest:
    """Arguments that do not fit the tool's input schema: `invalid_request` naming each argument (never the
    value sent) and saying what it takes."""
    takes = ", ".join(((tool.parameters if tool else {}).get("properties") or {}).keys()) or "none"
    fields: list[FieldError] = []
    for item in error.errors():
        path = _path(tuple(item["loc"]))
        kind = item["type"]
        if kind == "extra_forbidden":
            fields.append(FieldError(path[:100], f"is not an argument of this tool (it takes {takes})"))
        elif kind == "missing":
            fields.append(FieldError(path, "is required"))
        elif kind in _KIND_OF_ERROR:
            fields.append(FieldError(path, accepted(path, [_KIND_OF_ERROR[kind]])))
        elif path.rsplit(".", 1)[-1] == CONFIRM:
            fields.append(FieldError(path, CONFIRM_ACCEPTED))
        else:
            fields.append(FieldError(path, "is not a value this argument accepts"))
    return InvalidRequest("The arguments do not fit the tool's input schema.", fields[:20])
