"""Every tool's output schema, by tool name: the resource's answer, or the body of a tool error.

A tool error's `structuredContent` is `{code, message, errors}`. Some clients validate it against the output
schema even when `isError` is true (the TypeScript SDK, so the official Inspector), so each schema admits it
as the other shape: its members are declared beside the answer's, and `anyOf` requires one shape or the other.
"""

from __future__ import annotations

from groundwork.api.mcp.schemas import context, notifications, work
from groundwork.api.mcp.schemas.shapes import STRING, TEXT, Schema, array, described, obj

ERROR_MEMBERS: dict[str, Schema] = {
    "code": described(STRING, "With `isError`: the stable error code, the REST problem's `code`."),
    "message": described(STRING, "With `isError`: what went wrong, in plain words."),
    "errors": described(
        array(obj({"path": STRING, "message": TEXT})), "With `isError`: each argument or value refused, by path."
    ),
}


def admitting_errors(schema: Schema) -> Schema:
    """`schema`, or the body of a tool error."""
    answer = {key: value for key, value in schema.items() if key != "required"}
    answer["properties"] = {**schema["properties"], **ERROR_MEMBERS}
    answer["anyOf"] = [{"required": schema["required"]}, {"required": list(ERROR_MEMBERS)}]
    return answer


OUTPUTS: dict[str, Schema] = {
    name: admitting_errors(schema)
    for name, schema in {**work.OUTPUTS, **context.OUTPUTS, **notifications.OUTPUTS}.items()
}
