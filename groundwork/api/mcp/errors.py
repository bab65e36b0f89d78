"""How MCP answers a failure.

A tool that runs and fails answers a tool result with `isError: true` whose `structuredContent` is
`{code, message, errors}` (and the REST problem's other members, such as `required_scope`), the same JSON
as its text. Arguments that do not fit the input schema (a wrong JSON type, a missing or an unknown
argument) and an unknown tool are JSON-RPC errors -32602 (invalid params), whose `data` carries the same
`{code, message, errors}`.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent

from groundwork.domain.errors import GroundworkError


class CodedToolError(ToolError):
    """A tool failure carrying the domain error REST would answer."""

    def __init__(self, error: GroundworkError) -> None:
        super().__init__(error.detail)
        self.error = error


class InternalFailure(GroundworkError):
    """A failure on our side: its details are only logged."""

    status = 500
    code = "internal_error"
    title = "Internal error"

    def __init__(self) -> None:
        super().__init__("Something went wrong on our side.")


def tool_error(error: GroundworkError) -> CodedToolError:
    """A tool failure carrying the same stable code REST answers with."""
    return CodedToolError(error)


def error_body(error: GroundworkError) -> dict[str, Any]:
    """`{code, message, errors}` and the problem's other members."""
    extra = dict(error.extra)
    return {"code": error.code, "message": error.detail, "errors": extra.pop("errors", []), **extra}


def error_result(error: GroundworkError) -> CallToolResult:
    """The tool result of a failure: `isError`, the body as structured content and as its text."""
    body = error_body(error)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body))], structured_content=body, is_error=True
    )


def invalid_params(error: GroundworkError) -> MCPError:
    """The JSON-RPC error (-32602) for a call that does not fit the tool's input schema, or names no tool."""
    return MCPError(code=INVALID_PARAMS, message=error.detail, data=error_body(error))
