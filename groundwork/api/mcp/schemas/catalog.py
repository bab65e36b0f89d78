"""Every tool's output schema, by tool name."""

from __future__ import annotations

from groundwork.api.mcp.schemas import context, notifications, work
from groundwork.api.mcp.schemas.shapes import Schema

OUTPUTS: dict[str, Schema] = {**work.OUTPUTS, **context.OUTPUTS, **notifications.OUTPUTS}
